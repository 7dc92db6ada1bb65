// The clients that take channel events (Claude Code's notifications/claude/channel), and which of
// them a 2026-07-28 server/discover is declined to (--decline-discover): Claude Code takes channel
// events only in a 2025-11-25 session, and opens one when server/discover answers "method not found"
// (-32601). `claude-code`: a discover whose clientInfo names it, or whose capabilities declare the
// channel (experimental "claude/channel"); `always`: every discover.
import { isObject, type Loose } from './json-object.js';

/** The experimental capability by which Claude Code takes `notifications/claude/channel` from a server. */
export const CHANNEL_CAPABILITY = 'claude/channel';
/** The client known to show a channel event to its model (its clientInfo.name). */
export const CHANNEL_CLIENT = 'claude-code';

export const DECLINE_DISCOVER = ['never', 'claude-code', 'always'] as const;
export type DeclineDiscover = (typeof DECLINE_DISCOVER)[number];

/** Whether the discover whose client is `info` (its _meta clientInfo) with `capabilities` is declined. */
export function declinesDiscover(choice: DeclineDiscover, info: unknown, capabilities: Loose): boolean {
  if (choice !== 'claude-code') return choice === 'always';
  const experimental = capabilities.experimental;
  if (isObject(experimental) && isObject(experimental[CHANNEL_CAPABILITY])) return true;
  return isObject(info) && info.name === CHANNEL_CLIENT;
}
