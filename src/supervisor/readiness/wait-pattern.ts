// The regular expression of wait_for, compiled for V8's linear-time engine (RE2's semantics: no
// backtracking, so no expression can stall the daemon whatever the output), refused if it needs
// backtracking (backreferences, lookaround).
import { setFlagsFromString } from 'node:v8';
import { echoValue, ToolInputError } from '../../errors.js';

// The engine is V8's own (irregexp's experimental linear engine), behind a flag; the `l` flag asks
// for it per expression. Set before any expression is compiled with it.
setFlagsFromString('--enable-experimental-regexp-engine');

export const MAX_PATTERN_CHARS = 1024;

/** Compiles `source` (a JavaScript regular expression without slashes) for matching line by line. */
export function compileWaitPattern(source: string, field = 'wait_for', tool = 'run'): RegExp {
  try {
    return new RegExp(source, 'l');
  } catch (error) {
    const reason = (error as Error).message.replace(/^Invalid regular expression: /, '');
    throw new ToolInputError(`Invalid ${tool} input: "${field}" must be a regular expression that runs in linear time (no backreferences or lookaround); got ${echoValue(source)}: ${reason}`);
  }
}
