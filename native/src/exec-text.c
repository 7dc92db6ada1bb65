/* The command policy's text (exec-text.h). */
#define _GNU_SOURCE
#include "exec-text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec-mask.h"

/* The most of a command line a report shows; the rest is cut with "...". */
#define MAX_COMMAND_LINE 1024

static void reserve(struct text *text, size_t more) {
  if (text->failed || text->length + more + 1 <= text->capacity) return;
  size_t capacity = text->capacity == 0 ? 256 : text->capacity;
  while (capacity < text->length + more + 1) capacity *= 2;
  char *grown = realloc(text->data, capacity);
  if (grown == NULL) {
    text_free(text);
    text->failed = 1;
    return;
  }
  text->data = grown;
  text->capacity = capacity;
}

void text_add_bytes(struct text *text, const char *bytes, size_t length) {
  reserve(text, length);
  if (text->failed) return;
  memcpy(text->data + text->length, bytes, length);
  text->length += length;
  text->data[text->length] = '\0';
}

void text_add(struct text *text, const char *part) { text_add_bytes(text, part, strlen(part)); }

void text_printf(struct text *text, const char *format, ...) {
  char buffer[256];
  va_list args;
  va_start(args, format);
  int length = vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  if (length < 0) return;
  if ((size_t)length < sizeof buffer) return text_add_bytes(text, buffer, (size_t)length);
  reserve(text, (size_t)length);
  if (text->failed) return;
  va_start(args, format);
  vsnprintf(text->data + text->length, (size_t)length + 1, format, args);
  va_end(args);
  text->length += (size_t)length;
}

void text_add_json(struct text *text, const char *part) {
  text_add_bytes(text, "\"", 1);
  for (const unsigned char *c = (const unsigned char *)part; *c != '\0'; c++) {
    char escaped[8];
    if (*c == '"' || *c == '\\') snprintf(escaped, sizeof escaped, "\\%c", *c);
    else if (*c < 0x20 || *c == 0x7f) snprintf(escaped, sizeof escaped, "\\u%04x", *c);
    else {
      text_add_bytes(text, (const char *)c, 1);
      continue;
    }
    text_add(text, escaped);
  }
  text_add_bytes(text, "\"", 1);
}

void text_add_line(struct text *text, const char *part) { text_add_bytes(text, part, strcspn(part, "\r\n")); }

void text_free(struct text *text) {
  free(text->data);
  text->data = NULL;
  text->length = text->capacity = 0;
}

char *exec_members(const struct exec_read *exec, const char *command) {
  struct text text = {0};
  text_add(&text, "\"path\":");
  text_add_json(&text, exec->path);
  text_add(&text, ",\"argv\":[");
  for (int i = 0; i < exec->call.argc; i++) {
    if (i > 0) text_add(&text, ",");
    char *masked = mask_word(exec->argv[i], i > 0 ? exec->argv[i - 1] : NULL);
    text_add_json(&text, masked == NULL ? "***" : masked);
    free(masked);
  }
  text_printf(&text, "],\"cut\":%s,\"command\":", exec->cut ? "true" : "false");
  text_add_json(&text, command == NULL ? "" : command);
  return text.data;
}

/* One word as a shell reads it back: bare when it is plain, else in single quotes. */
static void add_word(struct text *text, const char *word) {
  if (word[0] != '\0' && word[strspn(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%")] == '\0') {
    text_add(text, word);
    return;
  }
  text_add(text, "'");
  for (const char *c = word; *c != '\0'; c++) {
    if (*c == '\'') text_add(text, "'\\''");
    else if (*c == '\n' || *c == '\r') text_add(text, "?");
    else text_add_bytes(text, c, 1);
  }
  text_add(text, "'");
}

char *exec_command_line(const struct exec_read *exec) {
  struct text text = {0};
  const char *slash = strrchr(exec->path, '/');
  add_word(&text, slash == NULL ? exec->path : slash + 1);
  for (int i = 1; i < exec->call.argc && text.length < MAX_COMMAND_LINE; i++) {
    text_add(&text, " ");
    char *masked = mask_word(exec->argv[i], exec->argv[i - 1]);
    add_word(&text, masked == NULL ? "***" : masked);
    free(masked);
  }
  if (text.length > MAX_COMMAND_LINE || exec->cut) {
    if (text.length > MAX_COMMAND_LINE) text.length = MAX_COMMAND_LINE;
    if (text.data != NULL) text.data[text.length] = '\0';
    text_add(&text, " ...");
  }
  return text.data;
}
