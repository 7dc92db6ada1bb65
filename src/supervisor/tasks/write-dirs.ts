// A sandbox's write directories as the daemon checks them: each resolved (symlinks followed) and
// named by the field that gave it, and compared with a floor as it resolves: the task's leader then
// opens each without following a symlink, so one swapped in since is refused.
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { directoryProblem, ToolInputError } from '../../errors.js';
import { isBeneath } from '../../process/sandbox.js';
import { echoValue } from '../../shared/echo.js';
import type { Sandbox } from '../../shared/sandbox.js';

/** A write directory as given and as it resolves, with the field that gave it. */
export interface WriteDir {
  given: string;
  resolved: string;
  field: string;
}

/**
 * How a write directory that a run did not give is named when it is the run's cwd or the temporary
 * directory: the floor and the defaults are checked at the start, so a kernel directory among them
 * can only come from there. Else null.
 */
export function defaultWriteField(dir: string, cwd: string, env: Record<string, string>): string | null {
  if (resolve(dir) === resolve(cwd)) return '"cwd", a default write directory';
  return resolve(dir) === resolve(env.TMPDIR ?? tmpdir()) ? 'the temporary directory, a default write directory' : null;
}

/** The field that gave `dir`, and where it resolves to another path, the path given: "sandbox.write[0]": "/w/esc" resolves to it. */
export const nameWriteDir = ({ given, resolved, field }: WriteDir): string =>
  given === resolved ? field : `${field}: ${JSON.stringify(given)} resolves to it`;

/**
 * `given` resolved (realpath): the sandbox is enforced on an existing directory, and a symlink in
 * its path must not carry it past the floor. Anything else is refused before the start, in words
 * that start with `what` ("... must be").
 */
export function resolveWriteDir(given: string, field: string, what: string): WriteDir {
  const dir = resolve(given);
  let problem = directoryProblem(dir);
  let resolved = dir;
  if (problem === null) {
    try {
      resolved = realpathSync(dir);
    } catch (error) {
      problem = (error as NodeJS.ErrnoException).code ?? 'unresolvable';
    }
  }
  if (problem !== null)
    throw new ToolInputError(
      `Invalid run input: ${what} an existing directory to write in; got ${echoValue(dir)}: ${problem}`,
    );
  return { given: dir, resolved, field };
}

/** `dir` with its symlinks resolved where it exists, else as it is. */
export function resolvedOrAsIs(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

/** What a sandbox allows beyond `floor` (a write dir outside all of its, or network it cuts), in words; null: nothing. */
export function widerThanFloor(writeDirs: WriteDir[], network: boolean, floor: Sandbox): string | null {
  const roots = floor.write.map(resolvedOrAsIs);
  const outside = writeDirs.find(({ resolved }) => !roots.some((root) => isBeneath(resolved, root)));
  if (outside !== undefined) return `it lets the task write in ${outside.resolved} (${nameWriteDir(outside)})`;
  return network && !floor.network ? 'it lets the task reach the network' : null;
}
