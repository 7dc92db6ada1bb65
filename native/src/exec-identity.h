/* The programs the rules name, known by what they are rather than what they are called: the
 * daemon finds each (on its PATH for a bare name) when it starts and gives the shim its inodes, its
 * size and its SHA-256 (exec-rules.h's format, after the rules):
 *
 *   IDENTITY_COUNT  then per identity:  KIND  SIZE  SHA256_HEX  INODE_COUNT  (DEV  INO)...
 *                                       NAME_COUNT  NAME...
 *
 * KIND is "program"; "git" (argv[0] git-NAME runs `git NAME`); "applet" (busybox, toybox: argv[0]
 * names the program it runs, and its NAMEs are not matched: /bin/ls is the same file as /bin/rm);
 * or "loader" (a dynamic loader: `ld.so PROGRAM ARGS` runs PROGRAM). NAMEs are the absolute paths
 * its rules name (a rule's bare name matches their file names). A file executed is that program
 * when it is one of its inodes (a hard link), or a regular file of its size and SHA-256 (a copy, a
 * memfd). */
#ifndef HIVE_EXEC_IDENTITY_H
#define HIVE_EXEC_IDENTITY_H

#include <sys/types.h>

#include "exec-fields.h"
#include "sha256.h"

enum identity_kind { IDENTITY_PROGRAM, IDENTITY_GIT, IDENTITY_APPLET, IDENTITY_LOADER };

struct file_inode {
  dev_t dev;
  ino_t ino;
};

struct exec_identity {
  enum identity_kind kind;
  off_t size;
  unsigned char hash[SHA256_BYTES];
  struct file_inode *inodes;
  int inode_count;
  const char **names;
  int name_count;
};

/* Reads the identities section from `fields`: 0, or -EINVAL (malformed), -ENOMEM. */
int identities_load(struct fields *fields);

/* The identity of the file open at `fd` (any fd, O_PATH too), or NULL where it is none of them.
 * A file of an identity's size is read and hashed once per inode, size, mtime and ctime. */
const struct exec_identity *identity_of_file(int fd);

#endif
