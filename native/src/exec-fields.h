/* The compiled policy's text as the shim reads it (exec-rules.h): NUL-terminated fields in turn. */
#ifndef HIVE_EXEC_FIELDS_H
#define HIVE_EXEC_FIELDS_H

#include <errno.h>
#include <string.h>

#include "parse.h"

/* The most of one count (rules, words, alternatives, identities, names) the text may give. */
#define FIELDS_MAX_COUNT 100000

struct fields {
  const char *text;
  size_t length, cursor;
};

/* The next field, or NULL past the end. */
static inline const char *next_field(struct fields *fields) {
  if (fields->cursor >= fields->length) return NULL;
  const char *field = fields->text + fields->cursor;
  fields->cursor += strlen(field) + 1;
  return field;
}

/* The next field as a count from 0 to FIELDS_MAX_COUNT: 0, or -EINVAL. */
static inline int next_count(struct fields *fields, long *count) {
  const char *field = next_field(fields);
  return field == NULL || parse_decimal(field, 0, FIELDS_MAX_COUNT, count) < 0 ? -EINVAL : 0;
}

/* The index in `names` (NULL-terminated) of the next field, or -EINVAL for another or none. */
static inline int next_choice(struct fields *fields, const char *const *names) {
  const char *field = next_field(fields);
  for (int i = 0; field != NULL && names[i] != NULL; i++) {
    if (strcmp(field, names[i]) == 0) return i;
  }
  return -EINVAL;
}

#endif
