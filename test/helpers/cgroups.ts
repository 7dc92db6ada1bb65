// A cgroup v2 folder per test daemon, so that its tasks' cgroups can be found, checked and
// removed at teardown without touching any other daemon's.
import { existsSync, mkdirSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { cgroup2Mount } from '../../src/process/cgroups.js';
import { dirname, join } from 'node:path';

/** The cgroup2 mount if this process may create cgroups in it, else null (tests then use process-group mode). */
export function writableCgroup2Mount(): string | null {
  const mount = cgroup2Mount();
  if (mount === null) return null;
  try {
    const probe = join(mount, `hive-bash-probe-${process.pid}`);
    mkdirSync(probe);
    rmdirSync(probe);
    return mount;
  } catch {
    return null;
  }
}

/** Creates `<mount>/hive-bash-test/<name>`; null when cgroups are not writable here. */
export function createTestCgroupRoot(name: string): string | null {
  const mount = writableCgroup2Mount();
  if (mount === null) return null;
  const root = join(mount, 'hive-bash-test', name);
  mkdirSync(root, { recursive: true });
  return root;
}

/** The task cgroups under `root`. */
export function listTaskCgroups(root: string): string[] {
  return existsSync(root)
    ? readdirSync(root)
        .filter((name) => name.startsWith('task-'))
        .map((name) => join(root, name))
    : [];
}

/** Kills everything in each task cgroup under `root`, then removes them and `root`. */
export async function removeTestCgroupRoot(root: string): Promise<void> {
  for (const dir of listTaskCgroups(root)) {
    try {
      writeFileSync(join(dir, 'cgroup.kill'), '1');
    } catch {
      // already gone
    }
  }
  for (const dir of [...listTaskCgroups(root), root]) {
    for (let attempt = 0; attempt < 100 && existsSync(dir); attempt++) {
      try {
        rmdirSync(dir);
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }
  try {
    rmdirSync(dirname(root)); // the shared parent, once no other test daemon uses it
  } catch {
    // still in use
  }
}
