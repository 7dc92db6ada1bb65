/* What runs inside an exec (exec-unwrap.h). */
#define _GNU_SOURCE
#include "exec-unwrap.h"

#include <errno.h>
#include <string.h>

static int spacetab(char c) { return c == ' ' || c == '\t'; }

/* The first byte of [first, last] that is not a space or tab, or NULL. */
static char *next_non_spacetab(char *first, char *last) {
  for (; first <= last; first++) {
    if (!spacetab(*first)) return first;
  }
  return NULL;
}

/* The first space, tab or NUL of [first, last], or NULL. */
static char *next_terminator(char *first, char *last) {
  for (; first <= last; first++) {
    if (spacetab(*first) || *first == '\0') return first;
  }
  return NULL;
}

int parse_shebang(char buffer[SHEBANG_BYTES + 1], size_t length, const char **name, const char **arg) {
  if (length < 2 || buffer[0] != '#' || buffer[1] != '!') return -ENOEXEC;
  memset(buffer + length, 0, SHEBANG_BYTES + 1 - length);
  char *buffer_end = buffer + SHEBANG_BYTES - 1;
  char *end = memchr(buffer, '\n', SHEBANG_BYTES);
  /* Without a newline, the interpreter must end within the buffer (else it would be cut). */
  if (end == NULL) {
    end = next_non_spacetab(buffer + 2, buffer_end);
    if (end == NULL || next_terminator(end, buffer_end) == NULL) return -ENOEXEC;
    end = buffer_end;
  }
  while (spacetab(end[-1])) end--;
  char *start = next_non_spacetab(buffer + 2, end);
  if (start == NULL || start == end) return -ENOEXEC;
  char *separator = next_terminator(start, end);
  *arg = separator != NULL && *separator != '\0' ? next_non_spacetab(separator, end) : NULL;
  *end = '\0';
  if (*arg != NULL) *separator = '\0';
  *name = start;
  return 0;
}

/* The loaders' options that take a value: the next word (glibc, musl) or after '=' (musl). */
static const char *const VALUED_OPTIONS[] = {"--library-path", "--inhibit-rpath", "--audit", "--preload", "--argv0", "--glibc-hwcaps-prepend", "--glibc-hwcaps-mask", NULL};

/* The valued option `word` is, as "--name" (1) or "--name=value" (2), else 0. */
static int valued_option(const char *word) {
  for (const char *const *option = VALUED_OPTIONS; *option != NULL; option++) {
    size_t length = strlen(*option);
    if (strncmp(word, *option, length) == 0 && (word[length] == '\0' || word[length] == '=')) return word[length] == '\0' ? 1 : 2;
  }
  return 0;
}

/* Options are read until the first word that is not one, or "--". An unknown "--word" is taken as
 * an option without a value (a newer loader's): the program after it is still matched. */
int loader_program(char *const *argv, int argc, int *program, const char **argv0) {
  int runs = 1, i = 1;
  *argv0 = NULL;
  for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
    const char *word = argv[i];
    int valued = valued_option(word);
    if (valued == 1 && i + 1 == argc) return -EAGAIN;
    if (valued != 0 && strncmp(word, "--argv0", 7) == 0) *argv0 = valued == 1 ? argv[i + 1] : word + 8;
    if (valued == 1) i++;
    else if (strcmp(word, "--list") == 0 || strcmp(word, "--verify") == 0 || strcmp(word, "--help") == 0) runs = 0;
    else if (strcmp(word, "--version") == 0) return 0;
    else if (word[2] == '\0') {
      i++;
      break;
    }
  }
  if (i >= argc) return -EAGAIN;
  *program = i;
  if (*argv0 == NULL) *argv0 = argv[i];
  return runs;
}

static const char *file_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash == NULL ? path : slash + 1;
}

const char *git_builtin(const char *argv0) {
  const char *name = file_name(argv0);
  return strncmp(name, "git-", 4) == 0 && name[4] != '\0' ? name + 4 : NULL;
}

int applet_word(char *const *argv, int argc) {
  if (argc == 0) return -1;
  const char *name = file_name(argv[0]);
  if (strcmp(name, "busybox") != 0 && strcmp(name, "toybox") != 0) return 0;
  if (argc == 1) return -EAGAIN;
  return argv[1][0] != '-' ? 1 : -1;
}
