// Where each task's output lives: <state dir>/harness/bash-tasks/<id>.out and .err. A task's worker
// creates its files; they are deleted when the task is removed (pruned, or replaced by a new run of
// its name).
import { chmodSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** The folder of the output files under `stateDir`, made (mode 0700) if need be. */
export function makeOutputDir(stateDir: string): string {
  const dir = join(stateDir, 'harness', 'bash-tasks');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return dir;
}

export class OutputFiles {
  readonly dir: string;

  /** Creates the folder (mode 0700) under `stateDir` if needed. */
  constructor(stateDir: string) {
    this.dir = makeOutputDir(stateDir);
  }

  /** The two files of task `id`; ids are checked against the name pattern before they get here. */
  pathsOf(id: string): { stdout: string; stderr: string } {
    return { stdout: join(this.dir, `${id}.out`), stderr: join(this.dir, `${id}.err`) };
  }

  /** The highest N of a generated id (task-N, registry/task-store.ts) with a file here; 0 when none has. */
  highestGeneratedNumber(): number {
    let highest = 0;
    for (const name of readdirSync(this.dir)) {
      const match = /^task-([0-9]{1,15})\.(?:out|err)$/.exec(name);
      if (match) highest = Math.max(highest, Number(match[1]));
    }
    return highest;
  }

  /** Deletes task `id`'s files. A process of the task still writing them writes to nothing anyone reads. */
  remove(id: string): void {
    const { stdout, stderr } = this.pathsOf(id);
    for (const path of [stdout, stderr]) rmSync(path, { force: true });
  }
}
