/* The command policy's rules (exec-rules.h): loaded once at the shim's start, matched at each exec. */
#define _GNU_SOURCE
#include "exec-rules.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse.h"

#define POLICY_MAGIC "hive-exec-policy 1"
#define MAX_POLICY_BYTES (16L << 20)
#define MAX_COUNT 100000

/* One word of a rule: its alternatives, pointers into the loaded text. */
struct rule_word {
  const char **alternatives;
  int count;
};

struct rule {
  enum exec_decision decision;
  const char *label;
  const char *reason;
  struct rule_word *words;
  int word_count;
};

static char *text = NULL;
static size_t text_length = 0, cursor = 0;
static struct rule *rules = NULL;
static int rule_count = 0, longest_rule = 1;
static enum exec_decision default_decision = EXEC_ALLOW;
static const char *default_reason = "";

/* The next NUL-terminated field, or NULL past the end. */
static const char *next_field(void) {
  if (cursor >= text_length) return NULL;
  const char *field = text + cursor;
  cursor += strlen(field) + 1;
  return field;
}

static int next_count(long *count) {
  const char *field = next_field();
  return field == NULL ? -EINVAL : parse_decimal(field, 0, MAX_COUNT, count);
}

static int parse_decision(const char *field, enum exec_decision *decision) {
  if (field == NULL) return -EINVAL;
  if (strcmp(field, "allow") == 0) *decision = EXEC_ALLOW;
  else if (strcmp(field, "ask") == 0) *decision = EXEC_ASK;
  else if (strcmp(field, "deny") == 0) *decision = EXEC_DENY;
  else return -EINVAL;
  return 0;
}

static int parse_word(struct rule_word *word) {
  long count;
  if (next_count(&count) < 0 || count < 1) return -EINVAL;
  word->alternatives = calloc((size_t)count, sizeof *word->alternatives);
  if (word->alternatives == NULL) return -ENOMEM;
  for (word->count = 0; word->count < count; word->count++) {
    if ((word->alternatives[word->count] = next_field()) == NULL) return -EINVAL;
  }
  return 0;
}

static int parse_rule(struct rule *rule) {
  long count;
  int err = parse_decision(next_field(), &rule->decision);
  if (err < 0) return err;
  if ((rule->label = next_field()) == NULL || (rule->reason = next_field()) == NULL) return -EINVAL;
  if (next_count(&count) < 0 || count < 1) return -EINVAL;
  rule->words = calloc((size_t)count, sizeof *rule->words);
  if (rule->words == NULL) return -ENOMEM;
  for (rule->word_count = 0; rule->word_count < count; rule->word_count++) {
    if ((err = parse_word(&rule->words[rule->word_count])) < 0) return err;
  }
  if (rule->word_count > longest_rule) longest_rule = rule->word_count;
  return 0;
}

static int read_text(int fd) {
  struct stat info;
  if (fstat(fd, &info) != 0) return -errno;
  if (info.st_size <= 0 || info.st_size > MAX_POLICY_BYTES) return -EINVAL;
  text = malloc((size_t)info.st_size + 1);
  if (text == NULL) return -ENOMEM;
  while (text_length < (size_t)info.st_size) {
    ssize_t got = pread(fd, text + text_length, (size_t)info.st_size - text_length, (off_t)text_length);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -errno;
    if (got == 0) return -EINVAL;
    text_length += (size_t)got;
  }
  text[text_length] = '\0';
  return 0;
}

int exec_rules_load(int fd, const char **call) {
  *call = "read the command policy";
  int err = read_text(fd);
  if (err < 0) return err;
  *call = "parse the command policy";
  const char *magic = next_field();
  if (magic == NULL || strcmp(magic, POLICY_MAGIC) != 0) return -EINVAL;
  if ((err = parse_decision(next_field(), &default_decision)) < 0) return err;
  if ((default_reason = next_field()) == NULL) return -EINVAL;
  long count;
  if (next_count(&count) < 0) return -EINVAL;
  rules = calloc((size_t)count + 1, sizeof *rules);
  if (rules == NULL) return -ENOMEM;
  for (rule_count = 0; rule_count < count; rule_count++) {
    if ((err = parse_rule(&rules[rule_count])) < 0) return err;
  }
  return cursor == text_length ? 0 : -EINVAL;
}

int exec_rules_words(void) { return longest_rule; }

static const char *file_name(const char *path) {
  const char *slash = path == NULL ? NULL : strrchr(path, '/');
  return slash == NULL ? path : slash + 1;
}

/* Whether the program alternative `pattern` names the executed file. */
static int program_matches(const char *pattern, const struct exec_call *exec) {
  if (pattern[0] == '/') return strcmp(pattern, exec->path) == 0 || (exec->real != NULL && strcmp(pattern, exec->real) == 0);
  return strcmp(pattern, file_name(exec->path)) == 0 || (exec->real != NULL && strcmp(pattern, file_name(exec->real)) == 0);
}

static int word_matches(const struct rule_word *word, int index, const struct exec_call *exec) {
  for (int i = 0; i < word->count; i++) {
    if (index == 0 ? program_matches(word->alternatives[i], exec) : strcmp(word->alternatives[i], exec->argv[index]) == 0) return 1;
  }
  return 0;
}

static int rule_matches(const struct rule *rule, const struct exec_call *exec) {
  if (rule->word_count > 1 && exec->argc < rule->word_count) return 0;
  for (int i = 0; i < rule->word_count; i++) {
    if (!word_matches(&rule->words[i], i, exec)) return 0;
  }
  return 1;
}

struct exec_verdict exec_rules_match(const struct exec_call *exec) {
  struct exec_verdict verdict = {.decision = default_decision, .rule = -1, .label = "", .reason = default_reason};
  for (int i = 0; i < rule_count; i++) {
    const struct rule *rule = &rules[i];
    if ((verdict.rule >= 0 && rule->decision <= verdict.decision) || !rule_matches(rule, exec)) continue;
    verdict = (struct exec_verdict){.decision = rule->decision, .rule = i, .label = rule->label, .reason = rule->reason};
    if (rule->decision == EXEC_DENY) break;
  }
  return verdict;
}

const char *exec_decision_name(enum exec_decision decision) {
  return decision == EXEC_DENY ? "deny" : decision == EXEC_ASK ? "ask" : "allow";
}
