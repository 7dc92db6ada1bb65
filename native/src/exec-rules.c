/* The command policy's rules (exec-rules.h): loaded once at the shim's start, matched at each exec. */
#define _GNU_SOURCE
#include "exec-rules.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec-fields.h"
#include "exec-identity.h"

#define POLICY_MAGIC "hive-exec-policy 2"
/* The largest compiled policy read: the daemon refuses a larger one at its start
 * (MAX_POLICY_BYTES in src/shared/policy-source.ts). */
#define MAX_POLICY_BYTES (16L << 20)

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
static struct fields fields = {0};
static struct rule *rules = NULL;
static int rule_count = 0, longest_rule = 1;
static enum exec_decision default_decision = EXEC_ALLOW;
static const char *default_reason = "";

/* The next field as a decision (its enum's values are the indexes here): 0, or -EINVAL. */
static int parse_decision(enum exec_decision *decision) {
  int index = next_choice(&fields, (const char *[]){"allow", "ask", "deny", NULL});
  if (index < 0) return index;
  *decision = (enum exec_decision)index;
  return 0;
}

static int parse_word(struct rule_word *word) {
  long count;
  if (next_count(&fields, &count) < 0 || count < 1) return -EINVAL;
  word->alternatives = calloc((size_t)count, sizeof *word->alternatives);
  if (word->alternatives == NULL) return -ENOMEM;
  for (word->count = 0; word->count < count; word->count++) {
    if ((word->alternatives[word->count] = next_field(&fields)) == NULL) return -EINVAL;
  }
  return 0;
}

static int parse_rule(struct rule *rule) {
  long count;
  int err = parse_decision(&rule->decision);
  if (err < 0) return err;
  if ((rule->label = next_field(&fields)) == NULL || (rule->reason = next_field(&fields)) == NULL) return -EINVAL;
  if (next_count(&fields, &count) < 0 || count < 1) return -EINVAL;
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
  size_t length = 0;
  while (length < (size_t)info.st_size) {
    ssize_t got = pread(fd, text + length, (size_t)info.st_size - length, (off_t)length);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -errno;
    if (got == 0) return -EINVAL;
    length += (size_t)got;
  }
  text[length] = '\0';
  fields = (struct fields){.text = text, .length = length};
  return 0;
}

int exec_rules_load(int fd, const char **call) {
  *call = "read the command policy";
  int err = read_text(fd);
  if (err < 0) return err;
  *call = "parse the command policy";
  const char *magic = next_field(&fields);
  if (magic == NULL || strcmp(magic, POLICY_MAGIC) != 0) return -EINVAL;
  if ((err = parse_decision(&default_decision)) < 0) return err;
  if ((default_reason = next_field(&fields)) == NULL) return -EINVAL;
  long count;
  if (next_count(&fields, &count) < 0) return -EINVAL;
  rules = calloc((size_t)count + 1, sizeof *rules);
  if (rules == NULL) return -ENOMEM;
  for (rule_count = 0; rule_count < count; rule_count++) {
    if ((err = parse_rule(&rules[rule_count])) < 0) return err;
  }
  if ((err = identities_load(&fields)) < 0) return err;
  return fields.cursor == fields.length ? 0 : -EINVAL;
}

int exec_rules_words(void) { return longest_rule; }

static const char *file_name(const char *path) {
  const char *slash = path == NULL ? NULL : strrchr(path, '/');
  return slash == NULL ? path : slash + 1;
}

/* Whether the program alternative `pattern` names `path`: the path itself, or its file name. */
static int names(const char *pattern, const char *path) {
  return path != NULL && strcmp(pattern, pattern[0] == '/' ? path : file_name(path)) == 0;
}

/* Whether the program alternative `pattern` names the executed file, or the ruled program it is. */
static int program_matches(const char *pattern, const struct exec_call *exec) {
  if (names(pattern, exec->path) || names(pattern, exec->real)) return 1;
  if (exec->identity == NULL || exec->identity->kind == IDENTITY_APPLET) return 0;
  for (int i = 0; i < exec->identity->name_count; i++) {
    if (names(pattern, exec->identity->names[i])) return 1;
  }
  return 0;
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

struct exec_verdict exec_rules_match(const struct exec_call *calls, int count) {
  struct exec_verdict verdict = {.decision = default_decision, .rule = -1, .label = "", .reason = default_reason};
  for (int c = 0; c < count; c++) {
    for (int i = 0; i < rule_count; i++) {
      const struct rule *rule = &rules[i];
      if ((verdict.rule >= 0 && rule->decision <= verdict.decision) || !rule_matches(rule, &calls[c])) continue;
      verdict = (struct exec_verdict){.decision = rule->decision, .rule = i, .label = rule->label, .reason = rule->reason};
      if (rule->decision == EXEC_DENY) return verdict;
    }
  }
  return verdict;
}

const char *exec_decision_name(enum exec_decision decision) {
  return decision == EXEC_DENY ? "deny" : decision == EXEC_ASK ? "ask" : "allow";
}
