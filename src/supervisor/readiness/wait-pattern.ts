// The regular expressions of wait_for and output's grep: refused unless V8's linear-time engine can
// run them (RE2's semantics: no backreferences or lookaround), and run so that no expression can
// stall the daemon whatever the output.
import { setFlagsFromString } from 'node:v8';
import { echoValue, ToolInputError } from '../../errors.js';

// The linear engine is V8's own (irregexp's experimental engine), behind a flag; the `l` flag asks
// for it per expression. It runs a few MB/s, though, where irregexp's compiled code runs hundreds
// (measured here: 2 to 5 MB/s against 0.9 to 38 GB/s on a build log). So an expression the linear
// engine accepts is run by irregexp, which V8 switches to the linear engine for that match once it
// has backtracked more than --regexp-backtracks-before-fallback (50,000) times: an expression that
// backtracks without end, such as (a+)+$, finishes in linear time. Set before any is compiled.
setFlagsFromString('--enable-experimental-regexp-engine');
setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

export const MAX_PATTERN_CHARS = 1024;

/** Compiles `source` (a JavaScript regular expression without slashes) for matching line by line. */
export function compileWaitPattern(source: string, field = 'wait_for', tool = 'run', flags = ''): RegExp {
  try {
    // eslint-disable-next-line no-invalid-regexp -- 'l' (linear) is V8's, behind --enable-experimental-regexp-engine
    new RegExp(source, 'l'); // refused here if the linear engine cannot run it
  } catch (error) {
    const reason = (error as Error).message.replace(/^Invalid regular expression: /, '');
    throw new ToolInputError(
      `Invalid ${tool} input: "${field}" must be a regular expression that runs in linear time (no backreferences or lookaround); got ${echoValue(source)}: ${reason}`,
    );
  }
  return new RegExp(source, flags);
}

/**
 * A run of literal text every match of `source` contains (the longest, of 3 characters or more),
 * or null: where output is searched for it first, only the lines that hold it are matched.
 */
export function requiredLiteral(source: string): string | null {
  if (/(^|[^\\])(\\\\)*\|/.test(source)) return null; // an alternative may do without it
  let best = '';
  let run = '';
  const end = () => {
    if (run.length > best.length) best = run;
    run = '';
  };
  for (let at = 0; at < source.length; at++) {
    const char = source[at]!;
    if (char === '\\') {
      const next = source[++at];
      if (next === undefined || /[0-9a-zA-Z]/.test(next))
        end(); // a class, an anchor or a code: not literal
      else run += next;
    } else if (char === '[' || char === '(') {
      end();
      at = skipGroup(source, at);
      if (at === -1) return null;
    } else if (char === '*' || char === '?' || char === '{') {
      run = run.slice(0, -1); // the character before may be absent
      end();
    } else if (char === '+') {
      end();
    } else if ('.^$)]}'.includes(char)) {
      end();
    } else {
      run += char;
    }
  }
  end();
  return best.length >= 3 ? best : null;
}

/** Where the class or group opening at `start` closes; -1 when it does not. */
function skipGroup(source: string, start: number): number {
  const open = source[start]!;
  let depth = 0;
  for (let at = start; at < source.length; at++) {
    const char = source[at]!;
    if (char === '\\') at++;
    else if (open === '[' ? char === ']' && at > start : char === ')' && --depth === 0) return at;
    else if (open === '(' && char === '(') depth++;
    else if (open === '(' && char === '[') {
      at = skipGroup(source, at);
      if (at === -1) return -1;
    }
  }
  return -1;
}
