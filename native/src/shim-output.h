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
  /* While set, bytes past the cap or the reserve are dropped no faster than
   * OUTPUT_DROP_BYTES_PER_SECOND; the shim clears it once the leader has ended. */
  int paced;
  /* While paced: the CLOCK_MONOTONIC time (ns) before which no more bytes are dropped. */
  long long drop_until_ns;
};

/* How fast a paced stream's bytes past the cap (or the reserve) are read and dropped. A writer that
 * goes on past them waits on its pipe, as on a slow terminal, instead of keeping a core busy for
 * output nobody keeps: 200 tasks flooding past their caps kept 400 processes running on two cores
 * and the daemon's calls waiting for a core (bench/status-under-flood). */
#define OUTPUT_DROP_BYTES_PER_SECOND (4LL * 1024 * 1024)

/* Makes the pipe of a stream written into `file`: `*leader_end` is its write end, for the leader's
 * stdout or stderr (close-on-exec, like the read end). 0 or -errno. */
int output_open(struct output_stream *stream, int file, int *leader_end);

/* Moves up to `budget` bytes that the pipe holds now into the file (those past the cap or the
 * reserve are discarded, while paced only as many as the pace allows); at EOF closes the pipe and
 * sets it to -1. Returns 1 when the stream was cut during this call (`cut` says why), else 0. */
int output_copy(struct output_stream *stream, long long max_bytes, long long budget);

/* Milliseconds (rounded up) until a paced stream that is dropping may be read again; 0: now. */
long long output_pause_ms(const struct output_stream *stream);

/* What the pipe holds right now, in bytes (0 if that cannot be read). */
long long output_pending(const struct output_stream *stream);

/* Writes `length` bytes of the shim's own into the stream's file, as if the task had written them
 * (counted, capped). Returns 1 when the stream was cut by it, else 0. */
int output_note(struct output_stream *stream, long long max_bytes, const char *text, size_t length);

#endif
