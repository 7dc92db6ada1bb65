/* The command policy in a task's shim (exec-policy.h): each exec matched, answered, or asked. */
#define _GNU_SOURCE
#include "exec-policy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec-notify.h"
#include "exec-rules.h"
#include "exec-text.h"
#include "exec-views.h"
#include "parse.h"

/* What a report says of an exec that could not be described (memory ran out). */
#define NO_MEMBERS "\"path\":\"\",\"argv\":[],\"cut\":true,\"command\":\"\""
/* Execs that may wait for an answer at once; past it an ask is refused. */
#define MAX_WAITING 64
/* The rule of a refusal that no rule made: the exec could not be matched whole. */
#define RULE_UNSEEN (-2)

/* An exec that waits for a person's answer: its notification, its process, and what it runs. */
struct waiting_exec {
  int seq;
  uint64_t id;
  pid_t pid;
  int rule;
  char *label;
  /* The exec as JSON members ("path":...,"argv":[...],"cut":...) and as a command line. */
  char *members;
  char *command;
};

static int listener = -1;
static struct exec_policy_io io;
static struct seccomp_notif *request;
static struct seccomp_notif_resp *response;
static struct exec_read exec = {.fd = -1};
static struct exec_views views;
static struct waiting_exec waiting[MAX_WAITING];
static int waiting_count = 0, next_seq = 1;

int exec_policy_start(int policy_fd, const struct exec_policy_io *given, const char **call) {
  int err = exec_rules_load(policy_fd, call);
  if (err < 0) return err;
  *call = "seccomp SECCOMP_GET_NOTIF_SIZES";
  if ((err = exec_notify_alloc(&request, &response)) < 0) return err;
  io = *given;
  return listener = install_exec_filter(call);
}

/* The task's stderr line of a refusal, and the daemon's status line of it. */
static void tell_refusal(int rule, const char *label, const char *command, const char *members, const char *reason) {
  struct text line = {0};
  text_add(&line, "hive-bash policy: refused `");
  text_add(&line, command == NULL ? "?" : command);
  if (rule >= 0) text_printf(&line, "` by rule %d (%s): ", rule, label);
  else text_add(&line, rule == RULE_UNSEEN ? "` by the policy: " : "` by the policy's default: ");
  text_add_line(&line, reason);
  text_add(&line, "\n");
  if (line.data != NULL) io.tell_task(line.data, line.length);
  text_free(&line);
  text_printf(&line, "policy-denied {\"rule\":%d,%s,\"reason\":", rule, members == NULL ? NO_MEMBERS : members);
  text_add_json(&line, reason);
  text_add(&line, "}\n");
  if (line.data != NULL) io.report(line.data, line.length);
  text_free(&line);
}

/* Reads the exec again, all of its words this time, as the report shows it. */
static void describe_exec(char **members, char **command) {
  if (read_exec(request, EXEC_MAX_WORDS, &exec) < 0) exec.call.argc = 0;
  *command = exec_command_line(&exec);
  *members = exec_members(&exec, *command);
}

/* The last refusal told, as its process, its real file and its command line: the same exec of the
 * same process again (execvp goes on along PATH after EACCES, and /bin is often /usr/bin) is
 * refused without another word. */
static pid_t last_refused_pid = 0;
static struct text last_refused = {0};

static int refuse_quietly(const char *command) {
  struct text key = {0};
  text_add(&key, exec.call.real == NULL ? exec.path : exec.real);
  text_add(&key, "\n");
  text_add(&key, command == NULL ? "" : command);
  int same = (pid_t)request->pid == last_refused_pid && key.data != NULL && last_refused.data != NULL && strcmp(key.data, last_refused.data) == 0;
  text_free(&last_refused);
  last_refused = key;
  last_refused_pid = (pid_t)request->pid;
  return same;
}

static void refuse_now(const struct exec_verdict *verdict) {
  char *members, *command;
  describe_exec(&members, &command);
  int quiet = refuse_quietly(command);
  if (exec_waits(listener, request->id) && answer_exec(listener, response, request->id, EACCES) == 0 && !quiet)
    tell_refusal(verdict->rule, verdict->label, command, members, verdict->reason);
  free(members);
  free(command);
}

static struct waiting_exec *find_waiting(int seq) {
  for (int i = 0; i < waiting_count; i++) {
    if (waiting[i].seq == seq) return &waiting[i];
  }
  return NULL;
}

static void forget_waiting(struct waiting_exec *entry) {
  free(entry->label);
  free(entry->members);
  free(entry->command);
  *entry = waiting[--waiting_count];
}

static void report_gone(int seq) {
  char line[64];
  int length = snprintf(line, sizeof line, "policy-gone %d\n", seq);
  io.report(line, (size_t)length);
}

/* An exec that asks: it waits, and the daemon is asked. A process that starts its exec again (a
 * signal interrupted the wait) replaces its earlier ask. */
static void ask(const struct exec_verdict *verdict) {
  for (int i = 0; i < waiting_count; i++) {
    if (waiting[i].pid == (pid_t)request->pid && !exec_waits(listener, waiting[i].id)) {
      report_gone(waiting[i].seq);
      forget_waiting(&waiting[i]);
      break;
    }
  }
  if (waiting_count == MAX_WAITING) {
    struct exec_verdict full = *verdict;
    full.reason = "too many execs of this task wait for approval at once";
    refuse_now(&full);
    return;
  }
  struct waiting_exec *entry = &waiting[waiting_count++];
  *entry = (struct waiting_exec){.seq = next_seq++, .id = request->id, .pid = (pid_t)request->pid, .rule = verdict->rule};
  entry->label = strdup(verdict->label);
  describe_exec(&entry->members, &entry->command);
  struct text line = {0};
  text_printf(&line, "policy-ask {\"seq\":%d,\"rule\":%d,%s}\n", entry->seq, entry->rule, entry->members == NULL ? NO_MEMBERS : entry->members);
  if (line.data != NULL) io.report(line.data, line.length);
  text_free(&line);
}

/* The verdict on every program the exec read runs (exec-views.h); one that cannot be followed
 * whole is refused. */
static struct exec_verdict match_views(void) {
  int err = exec_views_find(request, &exec, &views);
  if (err == -EAGAIN && read_exec_words(request, EXEC_MAX_WORDS, &exec) == 0) err = exec_views_find(request, &exec, &views);
  if (err == -EAGAIN) views.unseen = "it runs a program whose words go past the 64 of its argv the policy reads";
  struct exec_verdict verdict = {.decision = EXEC_DENY, .rule = RULE_UNSEEN, .label = "", .reason = views.unseen};
  if (views.unseen == NULL) verdict = exec_rules_match(views.calls, views.count);
  exec_views_release();
  return verdict;
}

/* A mount or fsopen: one that makes a filesystem fails with EPERM, and the task is told why; a
 * bind, a remount, a move or a change of propagation goes on, and so does any of the leader's
 * before its exec (`passing`: its sandbox's own). Since Linux 6.7 a task root in its user namespace
 * mounts a binfmt_misc of its own, whose handlers the kernel runs inside an exec, past the policy,
 * as `#!` runs an interpreter; and the type a mount names is in the task's memory, which another
 * of its threads can change between this check and the kernel's read: so no type is let through. */
static void serve_mount(pid_t passing) {
  if ((passing != 0 && (pid_t)request->pid == passing) || !makes_filesystem(request)) {
    answer_exec(listener, response, request->id, 0);
    return;
  }
  static const char told[] =
      "hive-bash: policy: mounting a filesystem (mount -t, fsopen) is refused under a command policy (a binfmt_misc one would run its interpreters unchecked); bind mounts, remounts and moves are not\n";
  if (exec_waits(listener, request->id)) io.tell_task(told, sizeof told - 1);
  answer_exec(listener, response, request->id, EPERM);
}

void exec_policy_serve(pid_t passing) {
  if (receive_exec(listener, request) < 0) return; /* its process died meanwhile, or a signal came */
  if (is_mount_call(request)) {
    serve_mount(passing);
    return;
  }
  if (passing != 0 && (pid_t)request->pid == passing) {
    answer_exec(listener, response, request->id, 0);
    return;
  }
  int err = read_exec(request, exec_rules_words(), &exec);
  /* The exec would fail with this anyway (an unreadable argument, a path too long). */
  if (err < 0) {
    answer_exec(listener, response, request->id, -err);
    return;
  }
  /* A file that is not there (execvp trying each folder of PATH) the kernel refuses itself. */
  if (exec.missing) {
    answer_exec(listener, response, request->id, 0);
    return;
  }
  struct exec_verdict verdict = match_views();
  /* The process read is still the one that made the exec: its pid was not reused meanwhile. */
  if (!exec_waits(listener, request->id)) return;
  if (verdict.decision == EXEC_ALLOW) answer_exec(listener, response, request->id, 0);
  else if (verdict.decision == EXEC_DENY) refuse_now(&verdict);
  else ask(&verdict);
}

void exec_policy_sweep(void) {
  for (int i = 0; i < waiting_count; i++) {
    if (exec_waits(listener, waiting[i].id)) continue;
    report_gone(waiting[i].seq);
    forget_waiting(&waiting[i--]);
  }
}

int exec_policy_control(const char *line) {
  int allow = strncmp(line, "allow ", 6) == 0;
  if (!allow && strncmp(line, "refuse ", 7) != 0) return 0;
  const char *number = line + (allow ? 6 : 7);
  char digits[16];
  size_t length = strcspn(number, " ");
  if (length == 0 || length >= sizeof digits) return -EINVAL;
  memcpy(digits, number, length);
  digits[length] = '\0';
  long seq;
  if (parse_decimal(digits, 1, INT32_MAX, &seq) < 0) return -EINVAL;
  const char *reason = number[length] == ' ' ? number + length + 1 : "refused";
  struct waiting_exec *entry = find_waiting((int)seq);
  if (entry == NULL) return 1; /* answered already, or its process is gone */
  int err = answer_exec(listener, response, entry->id, allow ? 0 : EACCES);
  if (err < 0) report_gone(entry->seq);
  else if (!allow) tell_refusal(entry->rule, entry->label, entry->command, entry->members, reason);
  forget_waiting(entry);
  return 1;
}
