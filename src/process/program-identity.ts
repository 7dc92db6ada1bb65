// The ruled programs as a task's shim tells them (native/src/exec-identity.h): each file a rule's
// program names, found as the daemon starts (on its PATH for a bare name), by its inodes, its size
// and its SHA-256; and the dynamic loaders that can run such a program. A task's exec of a hard
// link, a copy or a memfd of one is then that program, and `ld.so PROGRAM` runs PROGRAM.
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join } from 'node:path';
import type { CommandPolicy } from '../shared/command-policy.js';

/** In the order a file found twice keeps the last of (a rule on /bin/wget, busybox's link, is busybox). */
const KINDS = ['program', 'git', 'applet', 'loader'] as const;

export interface ProgramIdentity {
  /**
   * git: argv[0] git-NAME runs `git NAME`; applet: busybox or toybox, whose argv[0] names what it
   * runs (one file for /bin/ls and /bin/rm); loader: `ld.so PROGRAM` runs PROGRAM.
   */
  kind: (typeof KINDS)[number];
  size: number;
  sha256: string;
  /** [st_dev, st_ino] of each file found with these contents. */
  inodes: Array<[bigint, bigint]>;
  /** The paths the rules name it by (a rule's bare name matches their file names). */
  names: string[];
}

/** Where the loaders of x86-64 and arm64 glibc and musl systems are, besides each ELF's own PT_INTERP. */
const LOADER_PATHS = [
  '/lib64/ld-linux-x86-64.so.2',
  '/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2',
  '/lib/ld-linux-aarch64.so.1',
  '/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1',
  '/lib/ld-musl-x86_64.so.1',
  '/lib/ld-musl-aarch64.so.1',
];
/** The programs whose argv[0] git-NAME runs a builtin (git's git.c: `git-push` is `git push`). */
const GIT_NAMES = new Set(['git']);
/** The multi-call binaries whose argv[0] (or first argument) names the program they run. */
export const APPLET_BINARIES = new Set(['busybox', 'toybox']);
const READ_CHUNK_BYTES = 1 << 20;

interface OpenedFile {
  dev: bigint;
  ino: bigint;
  size: number;
  sha256: string;
  interpreter: string | null;
}

/** The identities of the programs `policy`'s rules name, found on `searchPath` for bare names, and of their loaders. */
export function findProgramIdentities(policy: CommandPolicy, searchPath = process.env.PATH ?? ''): ProgramIdentity[] {
  if (policy.rules.length === 0) return [];
  const identities = new Map<string, ProgramIdentity>();
  const loaders = new Set(LOADER_PATHS);
  const programs = policy.rules.flatMap((rule) => rule.words[0]!);
  for (const name of [...APPLET_BINARIES, ...programs])
    for (const path of candidatePaths(name, searchPath)) {
      const file = readProgramFile(path);
      if (file === null) continue;
      addIdentity(identities, path, file, programKind(basename(path)));
      if (file.interpreter !== null) loaders.add(file.interpreter);
    }
  for (const path of loaders) {
    const file = readProgramFile(path);
    if (file !== null) addIdentity(identities, path, file, 'loader');
  }
  return [...identities.values()];
}

function programKind(name: string): ProgramIdentity['kind'] {
  return APPLET_BINARIES.has(name) ? 'applet' : GIT_NAMES.has(name) ? 'git' : 'program';
}

/** The files a rule's program names: an absolute path itself; a bare name in each folder of PATH. */
function candidatePaths(name: string, searchPath: string): string[] {
  if (isAbsolute(name)) return [name];
  return [...new Set(searchPath.split(delimiter).filter((dir) => isAbsolute(dir)))].map((dir) => join(dir, name));
}

function addIdentity(
  identities: Map<string, ProgramIdentity>,
  path: string,
  file: OpenedFile,
  kind: ProgramIdentity['kind'],
) {
  const key = `${file.size}:${file.sha256}`;
  const identity = identities.get(key) ?? { kind, size: file.size, sha256: file.sha256, inodes: [], names: [] };
  identities.set(key, identity);
  if (KINDS.indexOf(kind) > KINDS.indexOf(identity.kind)) identity.kind = kind;
  if (!identity.inodes.some(([dev, ino]) => dev === file.dev && ino === file.ino))
    identity.inodes.push([file.dev, file.ino]);
  if (!identity.names.includes(path)) identity.names.push(path);
}

/** A non-empty regular file at `path` (followed), read whole for its hash and PT_INTERP; else null. */
function readProgramFile(path: string): OpenedFile | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    return null;
  }
  try {
    const stat = fstatSync(fd, { bigint: true });
    if (!stat.isFile() || stat.size === 0n) return null;
    const size = Number(stat.size);
    return { dev: stat.dev, ino: stat.ino, size, sha256: hashFile(fd, size), interpreter: elfInterpreter(fd) };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** The SHA-256 of the first `size` bytes of `fd`, in hex. */
function hashFile(fd: number, size: number): string {
  const hash = createHash('sha256');
  const chunk = Buffer.alloc(Math.min(size, READ_CHUNK_BYTES));
  for (let done = 0; done < size;) {
    const got = readSync(fd, chunk, 0, Math.min(chunk.length, size - done), done);
    if (got === 0) break;
    hash.update(chunk.subarray(0, got));
    done += got;
  }
  return hash.digest('hex');
}

/** The loader a 64-bit little-endian ELF names (its PT_INTERP), or null. */
function elfInterpreter(fd: number): string | null {
  const header = Buffer.alloc(64);
  if (readSync(fd, header, 0, 64, 0) < 64 || header.readUInt32BE(0) !== 0x7f454c46) return null;
  if (header[4] !== 2 || header[5] !== 1) return null;
  const offset = Number(header.readBigUInt64LE(0x20));
  const entrySize = header.readUInt16LE(0x36);
  const entry = Buffer.alloc(56);
  for (let i = 0; i < header.readUInt16LE(0x38) && entrySize >= 56; i++) {
    if (readSync(fd, entry, 0, 56, offset + i * entrySize) < 56) return null;
    if (entry.readUInt32LE(0) !== 3) continue;
    const text = Buffer.alloc(Math.min(Number(entry.readBigUInt64LE(32)), 4096));
    readSync(fd, text, 0, text.length, Number(entry.readBigUInt64LE(8)));
    const interpreter = text.toString('latin1').split('\0')[0]!;
    return isAbsolute(interpreter) ? interpreter : null;
  }
  return null;
}

/** The identities as the compiled policy's fields (exec-identity.h). */
export function identityFields(identities: ProgramIdentity[]): string[] {
  const fields = [String(identities.length)];
  for (const identity of identities) {
    fields.push(identity.kind, String(identity.size), identity.sha256, String(identity.inodes.length));
    for (const [dev, ino] of identity.inodes) fields.push(String(dev), String(ino));
    fields.push(String(identity.names.length), ...identity.names);
  }
  return fields;
}
