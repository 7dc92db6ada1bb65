// Where each task's output lives: <state dir>/harness/bash-tasks/<id>.out and .err. A task's worker
// creates its files; they are deleted when the task is removed (pruned, or replaced by a new run of
// its name).
import { chmodSync, mkdirSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { StateDirFullError } from '../../errors.js';

/** Files a task's start makes: its stdout and its stderr. */
const FILES_A_TASK = 2;

/** The folder of the output files under `stateDir`, made (mode 0700) if need be. */
export function makeOutputDir(stateDir: string): string {
  const dir = join(stateDir, 'harness', 'bash-tasks');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return dir;
}

/**
 * Why no task's output files can be made in `dir` now, in words: no inode is left on its file
 * system (a disk can run out of them with bytes to spare); null when some are, or when the file
 * system counts none (btrfs says 0 of 0).
 */
export function inodesProblem(dir: string): string | null {
  let stats;
  try {
    stats = statfsSync(dir);
  } catch {
    return null; // the folder is gone: StateDirCheck says so
  }
  if (stats.files === 0 || stats.ffree >= FILES_A_TASK) return null;
  return `no inode is free on its file system (${stats.ffree} of ${stats.files}, df -i ${dir}), and a task's output is two files`;
}

export class OutputFiles {
  readonly dir: string;

  /** Creates the folder (mode 0700) under `stateDir` if needed. */
  constructor(private readonly stateDir: string) {
    this.dir = makeOutputDir(stateDir);
  }

  /** Refuses a run whose output files cannot be made (StateDirFullError): nothing is written then. */
  assertRoom(): void {
    const problem = inodesProblem(this.dir);
    if (problem !== null) throw new StateDirFullError(this.stateDir, problem);
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
