/* Secrets in an exec's words, masked (exec-mask.h). */
#define _GNU_SOURCE
#include "exec-mask.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "exec-text.h"

#define MASK "***"

static const char *const SECRET_PARTS[] = {"pass", "pwd", "token", "secret", "auth", "key", "credential", "cookie", "signature", NULL};

/* Whether the `length` bytes at `name` are a secret-like name. */
static int secret_name(const char *name, size_t length) {
  if (length == 3 && strncasecmp(name, "sig", 3) == 0) return 1;
  for (const char *const *part = SECRET_PARTS; *part != NULL; part++) {
    size_t part_length = strlen(*part);
    for (size_t at = 0; at + part_length <= length; at++) {
      if (strncasecmp(name + at, *part, part_length) == 0) return 1;
    }
  }
  return 0;
}

static int name_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.'; }

/* The length of the header name `word` starts with (`Name:` not followed by "//"), or 0. */
static size_t header_name(const char *word) {
  size_t length = 0;
  while (name_char(word[length]) && word[length] != '.') length++;
  return length > 0 && word[length] == ':' && strncmp(word + length + 1, "//", 2) != 0 ? length : 0;
}

/* A URL's userinfo in `word`: its start, and in `*end` the '@' after it; or NULL. */
static const char *find_userinfo(const char *word, const char **end) {
  const char *scheme = strstr(word, "://");
  if (scheme == NULL) return NULL;
  const char *start = scheme + 3;
  size_t authority = strcspn(start, "/?#");
  const char *at = memrchr(start, '@', authority);
  *end = at;
  return at == NULL ? NULL : start;
}

/* Copies `word` into `out` with its URL userinfo and secret-like NAME=VALUE values masked. */
static void add_masked_values(struct text *out, const char *word) {
  int url = strstr(word, "://") != NULL || strchr(word, '?') != NULL;
  const char *userinfo_end = NULL;
  const char *userinfo = find_userinfo(word, &userinfo_end);
  const char *copied = word;
  for (const char *c = word; *c != '\0'; c++) {
    if (c == userinfo) {
      text_add_bytes(out, copied, (size_t)(c - copied));
      text_add(out, MASK);
      copied = userinfo_end;
      c = userinfo_end - 1;
      continue;
    }
    if (*c != '=') continue;
    const char *name = c;
    while (name > word && name_char(name[-1])) name--;
    if (!secret_name(name, (size_t)(c - name))) continue;
    const char *end = url ? c + 1 + strcspn(c + 1, "&#") : c + strlen(c);
    text_add_bytes(out, copied, (size_t)(c + 1 - copied));
    text_add(out, MASK);
    copied = end;
    c = end - 1;
  }
  text_add(out, copied);
}

/* Whether the option `previous` takes a secret as the next word (--password, --token). */
static int takes_secret(const char *previous) {
  return strncmp(previous, "--", 2) == 0 && strchr(previous, '=') == NULL && secret_name(previous + 2, strlen(previous + 2));
}

char *mask_word(const char *word, const char *previous) {
  struct text out = {0};
  size_t header = header_name(word);
  if (previous != NULL && takes_secret(previous)) text_add(&out, MASK);
  else if (previous != NULL && (strcmp(previous, "-u") == 0 || strcmp(previous, "--user") == 0) && strchr(word, ':') != NULL) {
    text_add_bytes(&out, word, strcspn(word, ":") + 1);
    text_add(&out, MASK);
  } else if (header > 0 && secret_name(word, header)) {
    size_t spaces = strspn(word + header + 1, " \t");
    text_add_bytes(&out, word, header + 1 + spaces);
    text_add(&out, MASK);
  } else add_masked_values(&out, word);
  if (out.data == NULL && !out.failed) text_add(&out, "");
  return out.data;
}
