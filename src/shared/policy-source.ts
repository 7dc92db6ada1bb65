// The policy file's text, as the daemon's start and hive-bash policy check --file read it: a
// regular file (a symlink to one is followed) of at most MAX_POLICY_BYTES. It is opened without
// blocking and looked at before it is read, so a FIFO, a device or an endless file is refused at
// once, never waited on or read.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/** The largest policy file, and the largest compiled policy a task's shim reads (native/src/exec-rules.c). */
export const MAX_POLICY_BYTES = 16 * 1024 * 1024;
const ACCEPTS = `it takes a regular file of JSON of at most 16 MiB (${MAX_POLICY_BYTES} bytes)`;

/** The text of policy file `file`; throws an Error whose message follows the file's name ("is a FIFO ..."). */
export function readPolicyText(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    throw new Error(`cannot be read: ${(error as Error).message}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(`is ${fileKind(stat)}, not a regular file: ${ACCEPTS}`);
    if (stat.size > MAX_POLICY_BYTES) throw new Error(`is ${stat.size} bytes: ${ACCEPTS}`);
    return readBounded(fd, stat.size).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Up to MAX_POLICY_BYTES of `fd` (a file that grew past it since its fstat is refused). */
function readBounded(fd: number, size: number): Buffer {
  const buffer = Buffer.alloc(Math.min(size + 1, MAX_POLICY_BYTES + 1));
  let length = 0;
  while (length < buffer.length) {
    const got = readSync(fd, buffer, length, buffer.length - length, null);
    if (got === 0) break;
    length += got;
  }
  if (length > MAX_POLICY_BYTES) throw new Error(`grew past ${MAX_POLICY_BYTES} bytes as it was read: ${ACCEPTS}`);
  return buffer.subarray(0, length);
}

function fileKind(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO (a named pipe)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isDirectory()) return 'a directory';
  if (stat.isSocket()) return 'a socket';
  return 'not a regular file';
}
