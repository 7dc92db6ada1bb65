// What the tasks' namespace hides of the daemon's own files (its token, its policy file, the
// harness's socket). A folder that holds nothing else is hidden whole: tasks see it empty, and a file
// renamed into it (sed -i, an editor, a configuration manager, a harness making its socket again)
// stays hidden. A file that shares its folder is covered alone, by a bind that goes with the file it
// covered: a rename over it shows the new one to tasks until the next start, which the start says.
// A symlink is hidden with the file it leads to.
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** A file to hide, and what it is to the operator ("the token file (--auth-token-file)"). */
export interface SecretFile {
  path: string;
  what: string;
}

/** The folders to hide whole, the files to cover alone, and a warning for each file less well hidden. */
export interface HidingPlan {
  hiddenDirs: string[];
  hidden: string[];
  warnings: string[];
}

/** How many of a shared folder's other entries a warning names. */
const ENTRIES_NAMED = 3;

/** How each of `files` is hidden from tasks. */
export function planHiding(files: SecretFile[]): HidingPlan {
  const secrets = files.flatMap((file) => withTarget({ ...file, path: resolve(file.path) }));
  const secretPaths = new Set(secrets.map((file) => file.path));
  const plan: HidingPlan = { hiddenDirs: [], hidden: [], warnings: [] };
  for (const { path, what } of secrets) {
    const dir = dirname(path);
    const others = otherEntries(dir, secretPaths);
    if (typeof others === 'string') {
      plan.warnings.push(`${what} ${path} is not hidden from tasks: its folder cannot be read (${others})`);
    } else if (others.length === 0 && dir !== '/') {
      if (!plan.hiddenDirs.includes(dir)) plan.hiddenDirs.push(dir);
    } else if (!existsSync(path)) {
      plan.warnings.push(
        `${what} ${path} is not there at the start and shares its folder with ${describeEntries(others)}: tasks will see it once it is made; keep it in a folder of its own, which tasks see empty`,
      );
    } else {
      plan.hidden.push(path);
      plan.warnings.push(
        `${what} ${path} shares its folder with ${describeEntries(others)}: tasks read it as empty, but once it is replaced by a rename (sed -i, an editor, a configuration manager) or made again they read the new one until the daemon starts again; keep it in a folder of its own, which tasks see empty`,
      );
    }
  }
  return plan;
}

/**
 * `file`, and the file it leads to where it is a symlink (or lies in a symlinked folder): hiding
 * the link alone would leave the file itself where a task reads it (a secret manager's
 * `/run/agenix/x -> /run/agenix.d/1/x`).
 */
function withTarget(file: SecretFile): SecretFile[] {
  let target: string;
  try {
    target = realpathSync(file.path);
  } catch {
    return [file]; // not there yet
  }
  return target === file.path ? [file] : [{ ...file, path: target }, file];
}

/** The entries of `dir` that are not among `secrets`, or why it cannot be read. */
function otherEntries(dir: string, secrets: Set<string>): string[] | string {
  try {
    return readdirSync(dir).filter((name) => !secrets.has(join(dir, name)));
  } catch (error) {
    return (error as Error).message;
  }
}

function describeEntries(names: string[]): string {
  const named = names.slice(0, ENTRIES_NAMED).map((name) => JSON.stringify(name));
  const rest = names.length - named.length;
  return rest > 0 ? `${named.join(', ')} and ${rest} more` : named.join(', ');
}
