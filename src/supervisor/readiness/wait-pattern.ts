// The regular expressions of wait_for and output's grep: refused unless V8's linear-time engine can
// run them (RE2's semantics: no backreferences or lookaround), and run so that no expression can
// stall the daemon whatever the output.
import { Script } from 'node:vm';
import { ConfigError, ToolInputError } from '../../errors.js';
import { echoValue } from '../../shared/echo.js';

// The linear engine is V8's own (irregexp's experimental engine), behind a flag; the `l` flag asks
// for it per expression. It runs a few MB/s, though, where irregexp's compiled code runs hundreds
// (measured here: 2 to 5 MB/s against 0.9 to 38 GB/s on a build log). So an expression the linear
// engine accepts is run by irregexp, which V8 switches to the linear engine for that match once it
// has backtracked more than --regexp-backtracks-before-fallback (50,000) times: an expression that
// backtracks without end, such as (a+)+$, finishes in linear time. Both are V8 flags that Node takes
// only on its command line (not in NODE_OPTIONS), before any code runs: set by the program later,
// their effect is undefined. Worker threads share them: V8's flags are the process's.
export const REGEXP_ENGINE_FLAGS = [
  '--enable-experimental-regexp-engine',
  '--enable-experimental-regexp-engine-on-excessive-backtracks',
] as const;

/** An expression that backtracks 2^40 times on its probe unless V8 falls back to the linear engine. */
const BACKTRACKING_PROBE = new Script("/(a+)+$/.test('a'.repeat(40) + 'b')", { filename: 'regexp-engine-probe' });
/** Falling back takes about a millisecond; without it the probe would run for days. */
const PROBE_TIMEOUT_MS = 1000;

/**
 * Throws a ConfigError naming the flags unless both are in force: the `l` flag compiles and a
 * catastrophically backtracking expression finishes. Called at start-up, before any pattern is taken.
 */
export function checkRegexpEngine(): void {
  const missing = missingEngine();
  if (missing === null) return;
  const flags = REGEXP_ENGINE_FLAGS.join(' ');
  const main = process.argv[1] ?? 'dist/src/supervisor/main.js';
  throw new ConfigError(
    `V8's linear-time regexp engine is off: ${missing}; without it an agent's wait_for or grep pattern could hang the daemon. ` +
      `Node takes these flags only on its command line: start it as \`node ${flags} ${main} ...\`, or with npm start or the hive-bash-daemon command, which pass them`,
  );
}

function missingEngine(): string | null {
  try {
    // eslint-disable-next-line no-invalid-regexp -- the very flag whose presence this checks
    new RegExp('', 'l');
  } catch {
    return `the RegExp flag 'l' is refused (${REGEXP_ENGINE_FLAGS[0]} is not set)`;
  }
  try {
    BACKTRACKING_PROBE.runInThisContext({ timeout: PROBE_TIMEOUT_MS });
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw error;
    return `/(a+)+$/ on 40 a's and a b still ran after ${PROBE_TIMEOUT_MS} ms (${REGEXP_ENGINE_FLAGS[1]} is not set)`;
  }
  return null;
}

export const MAX_PATTERN_CHARS = 1024;

/** A pattern as a call gave it, compiled, with the tool and field it came in (which a refusal names). */
export interface GivenPattern {
  regexp: RegExp;
  source: string;
  tool: string;
  field: string;
}

/** Compiles `source` (a JavaScript regular expression without slashes) for matching line by line. */
export function compileWaitPattern(source: string, field = 'wait_for', tool = 'run'): GivenPattern {
  try {
    // eslint-disable-next-line no-invalid-regexp -- 'l' (linear) is V8's, behind --enable-experimental-regexp-engine
    new RegExp(source, 'l'); // refused here if the linear engine cannot run it
  } catch (error) {
    const reason = (error as Error).message.replace(/^Invalid regular expression: /, '');
    throw new ToolInputError(
      `Invalid ${tool} input: "${field}" must be a regular expression that runs in linear time (no backreferences or lookaround); got ${echoValue(source)}: ${reason}`,
    );
  }
  return { regexp: new RegExp(source), source, tool, field };
}
