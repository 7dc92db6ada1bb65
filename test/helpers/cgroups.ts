// A cgroup v2 folder per test daemon, and its own folders in the v1 hierarchies, so that its tasks'
// cgroups can be found, checked and removed at teardown without touching any other daemon's.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { cgroup2Mount, daemonFolderName, removeDaemonFolder, SHARED_FOLDER } from '../../src/process/cgroups.js';
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

/**
 * The folder a daemon on `stateDir` started without --cgroup-root takes in the cgroup2 mount's
 * shared folder (src/process/containment.ts); null when cgroups are not writable here.
 */
export function sharedCgroupFolder(stateDir: string): string | null {
  const mount = writableCgroup2Mount();
  return mount === null ? null : join(mount, SHARED_FOLDER, daemonFolderName(stateDir));
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

/** The cgroup v1 mount of `controller`, from /proc/self/mountinfo, or null. */
export function v1Mount(controller: string): string | null {
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [mount, fs] = line.split(' - ');
    if (fs?.startsWith('cgroup ') && (fs.split(' ')[2] ?? '').split(',').includes(controller))
      return mount!.split(' ')[4]!;
  }
  return null;
}

/** The cgroup v1 mount of the cpu controller, or null. */
export const cpuV1Mount = (): string | null => v1Mount('cpu');

/** This process's cgroup in the v1 hierarchy of `controller`, which a test daemon starts in too. */
function ownV1Path(controller: string): string {
  const line = readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((entry) => entry.split(':')[1]?.split(',').includes(controller));
  return line?.split(':')[2] ?? '/';
}

/**
 * The folder of the daemon on `stateDir` in the v1 hierarchy of `controller` (where its task
 * cgroups of that limit go: src/process/limits.ts), or null when none is mounted. Other daemons
 * share the folder it is in: a test looks in this one alone.
 */
export function daemonV1Folder(stateDir: string, controller: 'memory' | 'pids' | 'cpu'): string | null {
  return v1FolderNamed(daemonFolderName(stateDir), controller);
}

function v1FolderNamed(name: string, controller: 'memory' | 'pids' | 'cpu'): string | null {
  const mount = v1Mount(controller);
  return mount === null ? null : join(mount, ownV1Path(controller), SHARED_FOLDER, name);
}

/** The daemon's folders in the memory, pids and cpu v1 hierarchies that are mounted. */
export function daemonV1Folders(stateDir: string): string[] {
  return v1FoldersNamed(daemonFolderName(stateDir));
}

function v1FoldersNamed(name: string): string[] {
  return (['memory', 'pids', 'cpu'] as const).flatMap((controller) => v1FolderNamed(name, controller) ?? []);
}

/** The task cgroups in the daemon's v1 folders. */
export function listDaemonV1TaskCgroups(stateDir: string): string[] {
  return daemonV1Folders(stateDir).flatMap(listTaskCgroups);
}

/** Removes a folder (empty, or about to be once its processes are reaped), trying again while busy. */
async function removeWhenEmpty(dir: string, attempts: number): Promise<void> {
  for (let attempt = 0; attempt < attempts && existsSync(dir); attempt++) {
    try {
      rmdirSync(dir);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/**
 * Teardown, once the daemon whose folders are `name` (src/process/cgroups.ts's daemonFolderName of
 * its state dir) and its tasks are killed: removes what it left of its v1 folders (its task
 * cgroups, then the folders; the shared folder too if no other daemon's is in it), and of its
 * cgroup v1 cpu folder (src/process/cpu-weight.ts), which a clean stop removes too.
 */
export async function removeDaemonV1Folders(name: string): Promise<void> {
  await removeCpuWeightFolder(name);
  for (const folder of v1FoldersNamed(name)) {
    if (!existsSync(folder)) continue;
    for (const dir of listTaskCgroups(folder)) await removeWhenEmpty(dir, 50);
    await removeWhenEmpty(folder, 50);
    removeDaemonFolder(folder);
  }
}

/** The cgroup v1 cpu folder `hive-bash-daemon-<name>` in the daemon's cpu cgroup, which is this process's. */
async function removeCpuWeightFolder(name: string): Promise<void> {
  const mount = cpuV1Mount();
  if (mount === null) return;
  // Its spawners die a moment after their threads (PR_SET_PDEATHSIG): a busy folder is tried again.
  await removeWhenEmpty(join(mount, ownV1Path('cpu'), `${SHARED_FOLDER}-${name}`), 50);
}
