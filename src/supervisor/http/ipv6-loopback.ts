// A daemon on 127.0.0.1 also listens on [::1], on the same port, and serves it as one server: else
// one of its tasks could listen there, and a client that resolves `localhost` to ::1 first would
// send that task its calls and its token (a task bound [::1] on the daemon's port in the eighth
// hostile round). Connections there are handed to the one HTTP server: the same limits and
// connection table, and the caller lookup reads /proc/net/tcp6 as it reads tcp.
import type { Server } from 'node:http';
import { createServer, type Server as NetServer } from 'node:net';

/** Listens on [::1]:`port` for `server`; the listener, or the error code that kept it from listening. */
export function listenOnIpv6Loopback(server: Server, port: number): Promise<NetServer | { error: string }> {
  const twin = createServer((socket) => server.emit('connection', socket));
  return new Promise((resolve) => {
    twin.once('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    twin.listen({ port, host: '::1', ipv6Only: true }, () => resolve(twin));
  });
}

/** Where a daemon takes [::1] too: it listens on 127.0.0.1 (what `localhost` may also name). */
export const takesIpv6Loopback = (host: string): boolean => host === '127.0.0.1' || host === 'localhost';

/** Errors that say this machine has no ::1 (IPv6 off): nothing to hold, no one can listen there. */
export const NO_IPV6 = new Set(['EADDRNOTAVAIL', 'EAFNOSUPPORT', 'EPROTONOSUPPORT']);
