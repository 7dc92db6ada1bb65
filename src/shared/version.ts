// The package's version, as package.json says it: the daemon's serverInfo, hive-bash's clientInfo,
// and both --version answers.
import { readFileSync } from 'node:fs';

export const VERSION = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
