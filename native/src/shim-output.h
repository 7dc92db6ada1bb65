/* A task's output as its shim copies it (-o): the leader writes a pipe, the shim reads what comes
 * and writes it into the output file it was given, keeping at most the cap and stopping short of
 * the last of the disk, as the daemon's own pump of a terminal's output does
 * (src/workers/output-cap.ts). */
#ifndef HIVE_SHIM_OUTPUT_H
#define HIVE_SHIM_OUTPUT_H

#include <stddef.h>

/* Why a stream stopped being kept (the rest is read and discarded). */
enum output_cut { OUTPUT_KEPT = 0, OUTPUT_CUT_CAP, OUTPUT_CUT_RESERVE, OUTPUT_CUT_WRITE };

struct output_stream {
  /* The pipe's read end (non-blocking), -1 once it is at EOF. */
  int pipe;
  /* The output file. */
  int file;
  /* Bytes the task wrote to the stream, and those of them kept in the file. */
  long long produced, kept;
  /* When `kept` reaches this, the disk's free space is looked at again. */
  long long next_check;
  enum output_cut cut;
  /* The errno of the failed write, for OUTPUT_CUT_WRITE. */
  int cut_errno;
};

/* Makes the pipe of a stream written into `file`: `*leader_end` is its write end, for the leader's
 * stdout or stderr (close-on-exec, like the read end). 0 or -errno. */
int output_open(struct output_stream *stream, int file, int *leader_end);

/* Moves up to `budget` bytes that the pipe holds now into the file (those past the cap or the
 * reserve are discarded); at EOF closes the pipe and sets it to -1. Returns 1 when the stream was
 * cut during this call (`cut` says why), else 0. */
int output_copy(struct output_stream *stream, long long max_bytes, long long budget);

/* What the pipe holds right now, in bytes (0 if that cannot be read). */
long long output_pending(const struct output_stream *stream);

/* Writes `length` bytes of the shim's own into the stream's file, as if the task had written them
 * (counted, capped). Returns 1 when the stream was cut by it, else 0. */
int output_note(struct output_stream *stream, long long max_bytes, const char *text, size_t length);

#endif
