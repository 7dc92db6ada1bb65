/* The programs the rules name, told by inode or by contents (exec-identity.h). */
#define _GNU_SOURCE
#include "exec-identity.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files whose contents were compared, kept per shim: a loop of execs of one file hashes it once. */
#define CACHE_ENTRIES 64

struct cached_file {
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
  const struct exec_identity *identity;
  int used;
};

static struct exec_identity *identities = NULL;
static int identity_count = 0;
static struct cached_file cache[CACHE_ENTRIES];
static int cache_next = 0;

static int parse_unsigned(const char *field, unsigned long long *value) {
  if (field == NULL || field[0] < '0' || field[0] > '9') return -EINVAL;
  char *end;
  errno = 0;
  *value = strtoull(field, &end, 10);
  return *end != '\0' || errno != 0 ? -EINVAL : 0;
}

static int parse_hash(const char *field, unsigned char hash[SHA256_BYTES]) {
  if (field == NULL || strlen(field) != SHA256_BYTES * 2) return -EINVAL;
  for (int i = 0; i < SHA256_BYTES; i++) {
    unsigned int byte;
    if (sscanf(field + i * 2, "%2x", &byte) != 1) return -EINVAL;
    hash[i] = (unsigned char)byte;
  }
  return 0;
}

static int parse_inodes(struct fields *fields, struct exec_identity *identity) {
  long count;
  if (next_count(fields, &count) < 0) return -EINVAL;
  if ((identity->inodes = calloc((size_t)count + 1, sizeof *identity->inodes)) == NULL) return -ENOMEM;
  for (identity->inode_count = 0; identity->inode_count < count; identity->inode_count++) {
    unsigned long long dev, ino;
    if (parse_unsigned(next_field(fields), &dev) < 0 || parse_unsigned(next_field(fields), &ino) < 0) return -EINVAL;
    identity->inodes[identity->inode_count] = (struct file_inode){.dev = (dev_t)dev, .ino = (ino_t)ino};
  }
  return 0;
}

static int parse_identity(struct fields *fields, struct exec_identity *identity) {
  unsigned long long size;
  long count;
  int kind = next_choice(fields, (const char *[]){"program", "git", "applet", "loader", NULL});
  if (kind < 0 || parse_unsigned(next_field(fields), &size) < 0) return -EINVAL;
  identity->kind = (enum identity_kind)kind;
  identity->size = (off_t)size;
  if (parse_hash(next_field(fields), identity->hash) < 0) return -EINVAL;
  int err = parse_inodes(fields, identity);
  if (err < 0) return err;
  if (next_count(fields, &count) < 0) return -EINVAL;
  if ((identity->names = calloc((size_t)count + 1, sizeof *identity->names)) == NULL) return -ENOMEM;
  for (identity->name_count = 0; identity->name_count < count; identity->name_count++) {
    if ((identity->names[identity->name_count] = next_field(fields)) == NULL) return -EINVAL;
  }
  return 0;
}

int identities_load(struct fields *fields) {
  long count;
  if (next_count(fields, &count) < 0) return -EINVAL;
  if ((identities = calloc((size_t)count + 1, sizeof *identities)) == NULL) return -ENOMEM;
  for (identity_count = 0; identity_count < count; identity_count++) {
    int err = parse_identity(fields, &identities[identity_count]);
    if (err < 0) return err;
  }
  return 0;
}

static const struct exec_identity *identity_by_inode(const struct stat *st) {
  for (int i = 0; i < identity_count; i++) {
    for (int j = 0; j < identities[i].inode_count; j++) {
      if (identities[i].inodes[j].dev == st->st_dev && identities[i].inodes[j].ino == st->st_ino) return &identities[i];
    }
  }
  return NULL;
}

static int size_is_ruled(off_t size) {
  for (int i = 0; i < identity_count; i++) {
    if (identities[i].size == size) return 1;
  }
  return 0;
}

/* The SHA-256 of the first `size` bytes of the file open at `fd` (reopened for reading through
 * /proc): 0, or -errno. A file that grows meanwhile is read no further. */
static int hash_file(int fd, off_t size, unsigned char hash[SHA256_BYTES]) {
  char name[64];
  snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
  int file = open(name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (file < 0) return -errno;
  static char buffer[1 << 16];
  struct sha256 state;
  sha256_start(&state);
  ssize_t got = 0;
  for (off_t done = 0; done < size; done += got) {
    size_t want = size - done < (off_t)sizeof buffer ? (size_t)(size - done) : sizeof buffer;
    if ((got = read(file, buffer, want)) < 0 && errno == EINTR) got = 0;
    else if (got <= 0) break;
    sha256_add(&state, buffer, (size_t)got);
  }
  int err = got < 0 ? -errno : 0;
  close(file);
  sha256_finish(&state, hash);
  return err;
}

static const struct exec_identity *identity_by_hash(const unsigned char hash[SHA256_BYTES], off_t size) {
  for (int i = 0; i < identity_count; i++) {
    if (identities[i].size == size && memcmp(identities[i].hash, hash, SHA256_BYTES) == 0) return &identities[i];
  }
  return NULL;
}

static int same_time(struct timespec a, struct timespec b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

/* The cache's entry of the file `st` describes, or NULL. The ctime is in the key because a task can
 * set the mtime back after changing a file, and not the ctime. */
static struct cached_file *cached(const struct stat *st) {
  for (int i = 0; i < CACHE_ENTRIES; i++) {
    struct cached_file *entry = &cache[i];
    if (entry->used && entry->dev == st->st_dev && entry->ino == st->st_ino && entry->size == st->st_size && same_time(entry->mtime, st->st_mtim) && same_time(entry->ctime, st->st_ctim)) return entry;
  }
  return NULL;
}

const struct exec_identity *identity_of_file(int fd) {
  struct stat st;
  if (identity_count == 0 || fstat(fd, &st) != 0) return NULL;
  const struct exec_identity *identity = identity_by_inode(&st);
  if (identity != NULL || !S_ISREG(st.st_mode) || st.st_size == 0 || !size_is_ruled(st.st_size)) return identity;
  struct cached_file *entry = cached(&st);
  if (entry != NULL) return entry->identity;
  unsigned char hash[SHA256_BYTES];
  if (hash_file(fd, st.st_size, hash) < 0) return NULL;
  identity = identity_by_hash(hash, st.st_size);
  cache[cache_next] = (struct cached_file){.dev = st.st_dev, .ino = st.st_ino, .size = st.st_size, .mtime = st.st_mtim, .ctime = st.st_ctim, .identity = identity, .used = 1};
  cache_next = (cache_next + 1) % CACHE_ENTRIES;
  return identity;
}
