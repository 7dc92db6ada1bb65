// Where each task's output lives: <state dir>/harness/bash-tasks/<id>.out and .err.
import { chmodSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export class OutputFiles {
  readonly dir: string;

  /** Creates the folder (mode 0700) under `stateDir` if needed. */
  constructor(stateDir: string) {
    this.dir = join(stateDir, 'harness', 'bash-tasks');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
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

  remove(id: string): void {
    const paths = this.pathsOf(id);
    rmSync(paths.stdout, { force: true });
    rmSync(paths.stderr, { force: true });
  }
}
