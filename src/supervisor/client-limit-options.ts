// The flags that bound what HTTP clients may hold: connections, the time a request may take to
// arrive, MCP sessions.
import type { OptionSpec } from './config-types.js';
import { integer } from './option-schemas.js';

export const CLIENT_LIMIT_OPTIONS: OptionSpec[] = [
  {
    flag: 'max-sessions',
    key: 'maxSessions',
    schema: integer(1, 1_000_000),
    accepts: 'an integer from 1 to 1000000',
    default: 1000,
    help: 'MCP sessions open at once; beyond it the one idle longest is closed, and initialize is refused while all were used within a minute',
  },
  {
    flag: 'max-sessions-per-peer',
    key: 'maxSessionsPerPeer',
    schema: integer(1, 1_000_000),
    accepts: 'an integer from 1 to 1000000',
    default: 500,
    help: 'MCP sessions open at once from one peer (remote address), with the same rule',
  },
  {
    flag: 'max-connections',
    key: 'maxConnections',
    schema: integer(1, 1_000_000),
    accepts: 'an integer from 1 to 1000000',
    default: 1024,
    help: 'HTTP connections open at once; beyond it one with no request in flight is closed, or the new one is',
  },
  {
    flag: 'max-connections-per-peer',
    key: 'maxConnectionsPerPeer',
    schema: integer(1, 1_000_000),
    accepts: 'an integer from 1 to 1000000',
    default: 512,
    help: 'HTTP connections open at once from one peer (remote address), with the same rule',
  },
  {
    flag: 'headers-timeout-seconds',
    key: 'headersTimeoutSeconds',
    schema: integer(1, 3600),
    accepts: 'an integer from 1 to 3600',
    default: 10,
    help: "a request's headers must have arrived this long after its first byte (or the connection's start), else 408 and the connection is closed",
  },
  {
    flag: 'request-timeout-seconds',
    key: 'requestTimeoutSeconds',
    schema: integer(1, 3600),
    accepts: 'an integer from 1 to 3600',
    default: 30,
    help: "a request's body must have arrived whole this long after its first byte, else 408 and the connection is closed (the answer's own wait is not counted)",
  },
];
