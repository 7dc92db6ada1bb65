// The command policy's status lines from a task's shim (native/src/exec-policy.h) as events, and
// its answers to asks as control lines.
import type { ExecCall, ExecEvent } from './launched-task.js';

/** The event of a `policy-...` status line (its word and the rest), or null for a line it does not know. */
export function parseExecLine(word: string, value: string): ExecEvent | null {
  if (word === 'policy-gone') {
    const seq = Number(value);
    return Number.isInteger(seq) && seq > 0 ? { event: 'gone', seq } : null;
  }
  if (word !== 'policy-denied' && word !== 'policy-ask') return null;
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(value) as Record<string, unknown>;
  } catch {
    return null;
  }
  const rule = typeof fields.rule === 'number' && fields.rule >= 0 ? fields.rule : null;
  const exec: ExecCall = {
    path: String(fields.path),
    argv: Array.isArray(fields.argv) ? fields.argv.map(String) : [],
    cut: fields.cut === true,
    command: String(fields.command),
  };
  if (word === 'policy-ask') return { event: 'ask', seq: Number(fields.seq), rule, exec };
  return { event: 'denied', rule, exec, reason: String(fields.reason) };
}

/** The longest reason a refusal's control line carries (the shim reads lines of up to 254 bytes). */
const MAX_REASON_BYTES = 200;

/** The control line that answers ask `seq`: `allow N`, or `refuse N REASON` with the reason on one line. */
export function execAnswerLine(seq: number, allow: boolean, reason: string): string {
  if (allow) return `allow ${seq}\n`;
  let line = reason.replace(/[\r\n]+/g, ' ');
  while (Buffer.byteLength(line) > MAX_REASON_BYTES) line = line.slice(0, -1);
  return `refuse ${seq} ${line}\n`;
}
