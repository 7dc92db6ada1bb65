/* Secrets in the words of an exec the policy refuses or asks about, masked as *** in everything
 * that shows it (the status line to the daemon, and so status, the todo body, the log and the
 * approvals; the refusal's line in the task's stderr). A secret is:
 *   - after a header whose name is secret-like (`Authorization: Bearer x`, `X-Api-Key: x`);
 *   - the value of a secret-like NAME=VALUE anywhere in a word (`--password=x`, `TOKEN=x`, and
 *     `?access_token=x&b=1` in a URL, where a value ends at & or #);
 *   - the word after a secret-like long option (`--password x`, `--token x`), and the part after
 *     the colon in the word after -u or --user (curl's `-u user:password`);
 *   - a URL's userinfo (`https://user:token@host`).
 * A name is secret-like when it holds (in any case) pass, pwd, token, secret, auth, key,
 * credential, cookie or signature, or is sig. Short options but -u are left as they are: -p is a
 * password to mysql, a port to ssh and a flag to mkdir. */
#ifndef HIVE_EXEC_MASK_H
#define HIVE_EXEC_MASK_H

/* `word` with its secrets masked, malloc'd (NULL when memory ran out); `previous` is the word
 * before it in argv (NULL for the first). */
char *mask_word(const char *word, const char *previous);

#endif
