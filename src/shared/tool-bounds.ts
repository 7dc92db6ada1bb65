// The bounds of the tools' fields that a client checks before it calls (the daemon's schemas and
// hive-bash's flags take them from here), and the package's version, which both report.
import { readFileSync } from 'node:fs';

/** The longest a run or status call waits. */
export const MAX_WAIT_SECONDS = 30;
/** The most of each stream's end status returns. */
export const MAX_TAIL_BYTES = 65_536;
/** The most tasks one list call returns. */
export const MAX_LIST_LIMIT = 1000;

/** package.json's version: the daemon's serverInfo, hive-bash's clientInfo, --version. */
export const VERSION = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
