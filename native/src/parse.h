/* Checked parsing of the decimal numbers on command lines and in requests. */
#ifndef HIVE_PARSE_H
#define HIVE_PARSE_H

#include <errno.h>
#include <stdlib.h>

/* Stores `text` in `out` if it is all decimal digits with a value in [min, max] (min >= 0):
 * 0, -EINVAL (not such a number: empty, a sign, a space, trailing text) or -ERANGE. */
static inline int parse_decimal(const char *text, long min, long max, long *out) {
  if (text[0] < '0' || text[0] > '9') return -EINVAL;
  char *end;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (*end != '\0') return -EINVAL;
  if (errno == ERANGE || value < min || value > max) return -ERANGE;
  *out = value;
  return 0;
}

#endif
