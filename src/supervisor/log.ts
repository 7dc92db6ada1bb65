// Logs: JSON lines on stderr (stdout carries only the "listening on" line).
import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino(
    { level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    // Synchronous: the lines are few, and the last ones before a crash must not be lost.
    pino.destination({ fd: 2, sync: true }),
  );
}
