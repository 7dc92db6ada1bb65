// The flags that bound what HTTP clients may hold: connections, the time a request may take to
// arrive, MCP sessions.
import { option } from './config-option.js';
import { integer } from './option-schemas.js';

export const CLIENT_LIMIT_OPTIONS = {
  maxSessions: option(
    {
      flag: 'max-sessions',
      accepts: 'an integer from 1 to 1000000',
      help: 'MCP sessions open at once; beyond it the one idle longest is closed, and initialize is refused while all were used within a minute',
    },
    integer(1, 1_000_000),
    1000,
  ),
  maxSessionsPerPeer: option(
    {
      flag: 'max-sessions-per-peer',
      accepts: 'an integer from 1 to 1000000',
      help: 'MCP sessions open at once from one peer (remote address), with the same rule',
    },
    integer(1, 1_000_000),
    500,
  ),
  maxConnections: option(
    {
      flag: 'max-connections',
      accepts: 'an integer from 1 to 1000000',
      help: 'HTTP connections open at once; beyond it one with no request in flight is closed, or the new one is',
    },
    integer(1, 1_000_000),
    1024,
  ),
  maxConnectionsPerPeer: option(
    {
      flag: 'max-connections-per-peer',
      accepts: 'an integer from 1 to 1000000',
      help: 'HTTP connections open at once from one peer (remote address), with the same rule',
    },
    integer(1, 1_000_000),
    512,
  ),
  headersTimeoutSeconds: option(
    {
      flag: 'headers-timeout-seconds',
      accepts: 'an integer from 1 to 3600',
      help: "a request's headers must have arrived this long after its first byte (or the connection's start), else 408 and the connection is closed",
    },
    integer(1, 3600),
    10,
  ),
  requestTimeoutSeconds: option(
    {
      flag: 'request-timeout-seconds',
      accepts: 'an integer from 1 to 3600',
      help: "a request's body must have arrived whole this long after its first byte, else 408 and the connection is closed (the answer's own wait is not counted)",
    },
    integer(1, 3600),
    30,
  ),
};
