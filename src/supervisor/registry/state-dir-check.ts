// Whether the state dir is still the one the daemon opened: its registry file the one it writes
// (not removed, nor replaced by another), its output folder there. Where tasks share the daemon's
// mount namespace (no tasks' namespace), a task's `rm -rf` of the state dir leaves the registry
// writing to a file no longer there, lost at the next start: /healthz says so, and so does the log.
// So is a disk out of inodes, on which no task can start.
import { lstatSync, mkdirSync, statSync, type BigIntStats } from 'node:fs';
import { join } from 'node:path';
import { inodesProblem } from '../output/output-files.js';

export class StateDirCheck {
  private readonly registry: BigIntStats | undefined;

  constructor(
    private readonly stateDir: string,
    private readonly outputDir: string,
  ) {
    this.registry = statSync(this.registryPath, { bigint: true, throwIfNoEntry: false });
  }

  private get registryPath(): string {
    return join(this.stateDir, 'tasks.sqlite');
  }

  /** What is wrong with the state dir now, in words; null when nothing is. */
  problem(): string | null {
    const registry = lstatSync(this.registryPath, { bigint: true, throwIfNoEntry: false });
    if (registry === undefined)
      return `the registry ${this.registryPath} was removed: the daemon writes to a file no longer there, lost at its next start; restart it to make a new one`;
    if (this.registry !== undefined && (registry.dev !== this.registry.dev || registry.ino !== this.registry.ino))
      return `the registry ${this.registryPath} was replaced by another file: the daemon writes to the one it opened, no longer there, lost at its next start; restart it`;
    if (!lstatSync(this.outputDir, { throwIfNoEntry: false })?.isDirectory())
      return `the output folder ${this.outputDir} was removed: what was in it is gone, and it is made again`;
    const inodes = inodesProblem(this.outputDir);
    return inodes === null ? null : `the state dir cannot be written: ${inodes}; run is refused until some are freed`;
  }

  /** Makes the output folder again where it was removed (mode 0700); nothing where it is there. */
  remakeOutputDir(): void {
    try {
      mkdirSync(this.outputDir, { recursive: true, mode: 0o700 });
    } catch {
      // the state dir is gone too, or read-only: problem() goes on saying so
    }
  }
}
