// A small file the daemon or hive-bash reads whole at its start (the policy file, a token file):
// a regular file (a symlink to one is followed) of at most a bound. It is opened without blocking
// and looked at before it is read, so a FIFO, a device or an endless file is refused at once,
// never waited on or read.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/** What a caller takes, in words ("a regular file of JSON of at most 16 MiB"), and how many bytes at most. */
export interface RegularFileBound {
  maxBytes: number;
  accepts: string;
}

/** How a bearer token's file is read, by the daemon (--auth-token-file) and by hive-bash (--token-file). */
export const TOKEN_FILE: RegularFileBound = {
  maxBytes: 4096,
  accepts: 'it takes a regular file holding the token, of at most 4 KiB',
};

/** The text of `file`; throws an Error whose message follows the file's name ("is a FIFO ..."). */
export function readRegularFile(file: string, bound: RegularFileBound): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    throw new Error(`cannot be read: ${(error as Error).message}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(`is ${describeFileKind(stat)}, not a regular file: ${bound.accepts}`);
    if (stat.size > bound.maxBytes) throw new Error(`is ${stat.size} bytes: ${bound.accepts}`);
    return readBounded(fd, stat.size, bound).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Up to `bound.maxBytes` of `fd` (a file that grew past it since its fstat is refused). */
function readBounded(fd: number, size: number, bound: RegularFileBound): Buffer {
  const buffer = Buffer.alloc(Math.min(size + 1, bound.maxBytes + 1));
  let length = 0;
  while (length < buffer.length) {
    const got = readSync(fd, buffer, length, buffer.length - length, null);
    if (got === 0) break;
    length += got;
  }
  if (length > bound.maxBytes) throw new Error(`grew past ${bound.maxBytes} bytes as it was read: ${bound.accepts}`);
  return buffer.subarray(0, length);
}

/** What a file that is not a regular one is, in words ("a FIFO (a named pipe)"). */
export function describeFileKind(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO (a named pipe)';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isDirectory()) return 'a directory';
  if (stat.isSocket()) return 'a socket';
  if (stat.isFile()) return `a file with ${stat.nlink} hard links`;
  return 'not a regular file';
}
