/* Text the command policy writes: a growing buffer, JSON strings, and an exec as JSON members and
 * as a command line a person reads. */
#ifndef HIVE_EXEC_TEXT_H
#define HIVE_EXEC_TEXT_H

#include <stddef.h>

#include "exec-notify.h"

/* A malloc'd, NUL-terminated text; `data` stays NULL if memory ran out (what it says is dropped). */
struct text {
  char *data;
  size_t length, capacity;
  int failed;
};

void text_add(struct text *text, const char *part);
void text_add_bytes(struct text *text, const char *bytes, size_t length);
void text_printf(struct text *text, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* `part` as a JSON string, quoted and escaped. */
void text_add_json(struct text *text, const char *part);
/* `part` up to its first line break. */
void text_add_line(struct text *text, const char *part);
void text_free(struct text *text);

/* `"path":"...","argv":[...],"cut":false,"command":"..."` (`command` from exec_command_line),
 * malloc'd (NULL when memory ran out). Here and in the command line, argv's secrets are masked
 * (exec-mask.h). */
char *exec_members(const struct exec_read *exec, const char *command);

/* The program's file name and its arguments, each quoted as a shell would need it, malloc'd. */
char *exec_command_line(const struct exec_read *exec);

#endif
