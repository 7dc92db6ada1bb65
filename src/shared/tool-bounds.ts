// The bounds of the tools' fields that a client checks before it calls (the daemon's schemas and
// hive-bash's flags take them from here).

/** The longest a run or status call waits. */
export const MAX_WAIT_SECONDS = 30;
/** The most of each stream's end status returns. */
export const MAX_TAIL_BYTES = 65_536;
/** The most tasks one list call returns. */
export const MAX_LIST_LIMIT = 1000;
