/* A task's output copied by its shim from a pipe into its file (see shim-output.h). The limits are
 * the daemon's (src/workers/output-cap.ts): writing stops while the file system has less than its
 * reserve free (64 MiB, or a tenth of a smaller one; looked at again once a MiB is kept, or half
 * of what is free beyond the reserve where that is less, so a small disk keeps it), and past the cap
 * the rest of the stream is read and discarded as fast as it comes: a writer past its cap runs at
 * the speed it would have into a file. What keeps the daemon responsive under such floods is the
 * tasks' CPU weight below its own (src/process/cpu-weight.ts), not a pace here. A stream is cut only
 * when a byte is dropped. */
#define _GNU_SOURCE
#include "shim-output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <unistd.h>

#define RESERVE_MAX_BYTES (64LL * 1024 * 1024)
#define RESERVE_CHECK_BYTES (1024LL * 1024)
/* The size asked for the pipes, and the most one read takes. read(2) and write(2), not splice(2):
 * 1 GiB of `head -c` into a file took 1.0 s of the shim's CPU and 0.95 s of head's when spliced from
 * a 64 KiB pipe, and 0.5 s and 0.48 s read and written through a 256 KiB one (in half the time). */
#define PIPE_BYTES (256 * 1024)

/* Where bytes are read to be written or dropped (cut). */
static char scratch[PIPE_BYTES];

int output_open(struct output_stream *stream, int file, int *leader_end) {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) return -errno;
  /* Only the shim's end: the task's writes block as they would on any pipe. */
  if (fcntl(ends[0], F_SETFL, O_NONBLOCK) != 0) {
    int err = -errno;
    close(ends[0]);
    close(ends[1]);
    return err;
  }
  /* Refused to an unprivileged user past fs/pipe-user-pages-soft (64 MiB of pipes in all by
   * default, about 128 tasks at this size): the pipe keeps its 64 KiB then. */
  (void)fcntl(ends[0], F_SETPIPE_SZ, PIPE_BYTES);
  *stream = (struct output_stream){.pipe = ends[0], .file = file};
  *leader_end = ends[1];
  return 0;
}

/* The bytes the file system of `file` has free beyond its reserve (negative: less than it is
 * free); LLONG_MAX when that cannot be read. */
static long long beyond_reserve(int file) {
  struct statfs stats;
  if (fstatfs(file, &stats) != 0) return LLONG_MAX;
  long long tenth = (long long)stats.f_blocks * stats.f_bsize / 10;
  long long reserve = tenth < RESERVE_MAX_BYTES ? tenth : RESERVE_MAX_BYTES;
  return (long long)stats.f_bavail * stats.f_bsize - reserve;
}

/* Marks the stream cut, once: 1 if this call did. */
static int stop_keeping(struct output_stream *stream, enum output_cut cut, int err) {
  if (stream->cut != OUTPUT_KEPT) return 0;
  stream->cut = cut;
  stream->cut_errno = err;
  return 1;
}

/* How many of the stream's next bytes may be kept; when none, `*why` says what a dropped byte
 * would be cut by (OUTPUT_KEPT once the stream is cut already). */
static long long room_for(struct output_stream *stream, long long max_bytes, enum output_cut *why) {
  *why = OUTPUT_KEPT;
  if (stream->cut != OUTPUT_KEPT) return 0;
  if (stream->kept >= stream->next_check) {
    /* Looked at again on every call while the disk is short: it is marked only once a byte is dropped. */
    long long spare = beyond_reserve(stream->file);
    if (spare < 0) {
      *why = OUTPUT_CUT_RESERVE;
      return 0;
    }
    stream->next_check = stream->kept + (spare / 2 < RESERVE_CHECK_BYTES ? spare / 2 + 1 : RESERVE_CHECK_BYTES);
  }
  /* No more than up to the next look: one read must not take the disk past its reserve. */
  long long until_check = stream->next_check - stream->kept;
  if (max_bytes == 0) return until_check;
  if (stream->kept >= max_bytes) *why = OUTPUT_CUT_CAP;
  return max_bytes - stream->kept < until_check ? max_bytes - stream->kept : until_check;
}

/* Writes all of `data` to the file; a failed write cuts the stream (1), the bytes it held lost. */
static int keep(struct output_stream *stream, const char *data, size_t length) {
  for (size_t done = 0; done < length;) {
    ssize_t written = write(stream->file, data + done, length - done);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return stop_keeping(stream, OUTPUT_CUT_WRITE, errno);
    done += (size_t)written;
  }
  stream->kept += (long long)length;
  return 0;
}

int output_copy(struct output_stream *stream, long long max_bytes, long long budget) {
  int cut = 0;
  for (long long moved = 0; stream->pipe >= 0 && moved < budget;) {
    enum output_cut why;
    long long room = room_for(stream, max_bytes, &why);
    ssize_t got;
    if (room == 0) {
      got = read(stream->pipe, scratch, sizeof scratch);
      if (got > 0) cut |= stop_keeping(stream, why, 0);
    } else {
      got = read(stream->pipe, scratch, room < (long long)sizeof scratch ? (size_t)room : sizeof scratch);
      if (got > 0) cut |= keep(stream, scratch, (size_t)got);
    }
    if (got > 0) {
      stream->produced += got;
      moved += got;
    } else if (got < 0 && errno == EINTR) {
      continue;
    } else if (got < 0 && errno == EAGAIN) {
      break;
    } else {
      /* EOF, or a read error, which ends the stream like EOF. */
      close(stream->pipe);
      stream->pipe = -1;
    }
  }
  return cut;
}

long long output_pending(const struct output_stream *stream) {
  int bytes = 0;
  if (stream->pipe < 0 || ioctl(stream->pipe, FIONREAD, &bytes) != 0) return 0;
  return bytes;
}

int output_note(struct output_stream *stream, long long max_bytes, const char *text, size_t length) {
  enum output_cut why;
  long long room = room_for(stream, max_bytes, &why);
  stream->produced += (long long)length;
  if (room == 0) return stop_keeping(stream, why, 0);
  /* A note is short: kept whole but what the cap cuts, however near the next look at the disk. */
  long long below_cap = max_bytes == 0 ? LLONG_MAX : max_bytes - stream->kept;
  if (below_cap < (long long)length)
    return keep(stream, text, (size_t)below_cap) | stop_keeping(stream, OUTPUT_CUT_CAP, 0);
  return keep(stream, text, length);
}
