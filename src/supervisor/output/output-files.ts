// Where each task's output lives: <state dir>/harness/bash-tasks/<id>.out and .err. A pruned
// task's files are emptied and kept as spares (hidden names, at most SPARE_LIMIT) that later tasks'
// files are renamed from. On an ext4 without a journal every new inode costs a pass over the inodes
// its block group freed in the last minutes, and a daemon at its retention count frees two with
// every task's end: measured here under that churn, 0.48 to 0.55 ms of CPU a file created against
// 0.06 to 0.09 ms a file renamed from a spare (bench/README.md, issue 25's fourth sitting).
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { join } from 'node:path';

/** Spares kept at most: enough for a burst of pruning, few enough to be nothing on disk. */
const SPARE_LIMIT = 64;
const SPARE_NAME = /^\.spare-([0-9]{1,15})$/;

export class OutputFiles {
  readonly dir: string;
  private readonly spares: string[] = [];
  private spareNumber = 0;

  /** Creates the folder (mode 0700) under `stateDir` if needed, and takes up the spares a last run left. */
  constructor(stateDir: string) {
    this.dir = join(stateDir, 'harness', 'bash-tasks');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    for (const name of readdirSync(this.dir)) {
      const match = SPARE_NAME.exec(name);
      if (!match) continue;
      this.spareNumber = Math.max(this.spareNumber, Number(match[1]));
      if (this.spares.length < SPARE_LIMIT) this.spares.push(join(this.dir, name));
      else rmSync(join(this.dir, name), { force: true });
    }
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

  /** A new run of task `id`: its files are made from spares where it has none yet (its worker opens them with O_TRUNC). */
  admit(id: string): void {
    if (this.spares.length === 0) return;
    const { stdout, stderr } = this.pathsOf(id);
    for (const path of [stdout, stderr]) {
      const spare = this.spares.pop();
      if (spare === undefined) return;
      if (existsSync(path)) {
        this.spares.push(spare);
        continue;
      }
      try {
        renameSync(spare, path);
      } catch {
        // gone from outside: the worker creates the file instead
      }
    }
  }

  /**
   * Removes task `id`'s files: each is emptied and kept as a spare while there is room, unless its
   * run is `stillHeld` (a finished task whose lingering processes may still write its output: that
   * file is deleted, so that its writers write to nothing anyone reads).
   */
  remove(id: string, stillHeld: boolean): void {
    const { stdout, stderr } = this.pathsOf(id);
    for (const path of [stdout, stderr]) if (stillHeld || !this.keepAsSpare(path)) rmSync(path, { force: true });
  }

  /**
   * Empties the file at `path` and moves it among the spares, mode 0600; false when it is not kept:
   * no room, gone, not a plain file of this daemon's user, or linked elsewhere too (`ln` of a task's
   * output keeps its contents, as a deletion would).
   */
  private keepAsSpare(path: string): boolean {
    if (this.spares.length >= SPARE_LIMIT) return false;
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch {
      return false;
    }
    try {
      const stats = fstatSync(fd);
      if (!stats.isFile() || stats.nlink !== 1 || stats.uid !== process.getuid?.()) return false;
      ftruncateSync(fd, 0);
      fchmodSync(fd, 0o600);
      const spare = join(this.dir, `.spare-${++this.spareNumber}`);
      renameSync(path, spare);
      this.spares.push(spare);
      return true;
    } catch {
      return false;
    } finally {
      closeSync(fd);
    }
  }
}
