// The errors of the command line, each carrying the exit code it ends the program with.

/** Exit codes of hive-bash, beside a task's own code where a command waits on a task. */
export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;
export const EXIT_UNREACHABLE = 3;
/** wait --timeout passed, or run's wait ended, before the task did (as timeout(1)). */
export const EXIT_TIMEOUT = 124;
/** stdout's reader went away before all was written: 128+SIGPIPE, as a shell reports a tool SIGPIPE ended. */
export const EXIT_PIPE = 141;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_ERROR,
    /** The daemon's error code (ERR_UNKNOWN_TASK, ...) when the daemon refused a call. */
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A flag or argument the command does not accept: exit code 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT_USAGE);
  }
}

/** The daemon could not be reached at all: exit code 3. */
export class UnreachableError extends CliError {
  constructor(message: string) {
    super(message, EXIT_UNREACHABLE);
  }
}
