// What hive-task-init's init could not have, as its "note ..." lines say it (native/src/task-init.c),
// in words for the start line, /healthz and the warnings.
import { describeErrno } from '../errors.js';

export interface InitNotes {
  /** Why a task that is root could undo the mounts (the kernel refused the init a user namespace), or null. */
  unlocked: string | null;
  /** Why tasks see the old /proc, not one of their namespace (the kernel refused it), or null. */
  noOwnProc: string | null;
  /** Why no task can be sandboxed where tasks run (the init tried a sandbox's set-up), or null. */
  noSandbox: string | null;
}

export const NO_NOTES: InitNotes = { unlocked: null, noOwnProc: null, noSandbox: null };

/** Takes one note of the init (its line without "note "), in words, into `notes`; an unknown one is left. */
export function takeNote(notes: InitNotes, note: string): void {
  const [word, errno, ...call] = note.split(' ');
  const failed = `${describeErrno(Number(errno))}`;
  if (word === 'nouser')
    notes.unlocked = `unshare CLONE_NEWUSER: ${failed}: a task that is root can unmount what keeps the state dir read-only and hides the daemon's files`;
  else if (word === 'noproc')
    notes.noOwnProc = `mount proc: ${failed}: the kernel refuses a /proc of the tasks' own where this one masks paths (a container's default), so tasks see this /proc: ps and pkill list processes outside their namespace, whose pids mean other processes or none there (signals still reach only tasks); a container run with --security-opt unmask=ALL (Podman) or --security-opt systempaths=unconfined (Docker) lets them have their own`;
  else if (word === 'nosandbox')
    notes.noSandbox = `setting a sandbox up where tasks run failed at ${call.join(' ')}: ${failed}`;
}
