// Who may talk to the daemon: a Host and Origin that name it (against DNS rebinding) and, when
// configured, the bearer token.
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/** True for addresses that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

export interface RequestGuard {
  /** Null when the request may pass; else the status and reason to refuse it with. */
  check(req: IncomingMessage): { status: number; message: string } | null;
}

export function createRequestGuard(boundHost: string, token: string | null): RequestGuard {
  const wildcard = boundHost === '0.0.0.0' || boundHost === '::';
  const allowedNames = new Set([...LOOPBACK_NAMES, boundHost.toLowerCase()]);
  const nameAllowed = (hostname: string) =>
    wildcard || allowedNames.has(hostname.toLowerCase().replace(/^\[|\]$/g, ''));
  const expected = token === null ? null : digest(token);
  /** The Host header last let through: a client sends the same one on every request. */
  let lastAllowed: string | undefined;

  return {
    check(req) {
      const host = req.headers.host;
      if (!host || (host !== lastAllowed && !nameAllowed(hostnameOf(host)))) {
        return {
          status: 403,
          message: `Forbidden: the Host header ${JSON.stringify(host ?? '')} does not name this daemon`,
        };
      }
      lastAllowed = host;
      const origin = req.headers.origin;
      if (origin !== undefined && !originAllowed(origin, nameAllowed)) {
        return { status: 403, message: `Forbidden: requests from origin ${JSON.stringify(origin)} are not accepted` };
      }
      if (expected !== null) {
        const given = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
        if (given === undefined || !timingSafeEqual(digest(given), expected)) {
          return {
            status: 401,
            message: 'Unauthorized: send Authorization: Bearer TOKEN with the token from --auth-token-file',
          };
        }
      }
      return null;
    },
  };
}

function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

function originAllowed(origin: string, nameAllowed: (hostname: string) => boolean): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && nameAllowed(url.hostname);
  } catch {
    return false;
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest();
