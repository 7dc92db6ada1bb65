/* What runs inside an exec when the file executed is not the program itself, read as the kernel, a
 * dynamic loader and git read it: no system calls, only the parsing. */
#ifndef HIVE_EXEC_UNWRAP_H
#define HIVE_EXEC_UNWRAP_H

#include <stddef.h>

/* The bytes of a file the kernel reads for its #! line (BINPRM_BUF_SIZE). */
#define SHEBANG_BYTES 256

/* Parses a #! line as Linux's fs/binfmt_script.c does, in place: `buffer` holds the file's first
 * `length` bytes (at most SHEBANG_BYTES; a shorter file is read as NUL-padded). Sets `*name` to
 * the interpreter and `*arg` to its one optional argument (NULL for none): 0, or -ENOEXEC where
 * the kernel would not run it as a script. */
int parse_shebang(char buffer[SHEBANG_BYTES + 1], size_t length, const char **name, const char **arg);

/* Where the program a dynamic loader runs is in its argv (`ld.so [OPTION]... PROGRAM [ARG]...`,
 * glibc's elf/rtld.c; musl's options are a subset): its index in `*program`, and the argv[0] it
 * gets (`--argv0`, else the program as named) in `*argv0`. 1: found; 0: the loader runs no program
 * (--list, --verify, --help, --version, or a mistake it stops at); -EAGAIN: argv ends first. */
int loader_program(char *const *argv, int argc, int *program, const char **argv0);

/* The builtin that git runs for `argv0` (git-push: "push"), or NULL where it names none. */
const char *git_builtin(const char *argv0);

/* Where the program a multi-call binary runs (busybox, toybox) is named in its argv: 0 (argv[0],
 * `/bin/wget` as a link to it), 1 (`busybox wget`), -1 for none, -EAGAIN where argv ends first. */
int applet_word(char *const *argv, int argc);

#endif
