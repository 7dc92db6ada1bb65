// Reads the end of an output file for status: the last bytes, cut at UTF-8 character boundaries.
import { fstatSync } from 'node:fs';
import { readOpen, replacedOutput, withFile } from './growing-file.js';

export interface StreamTail {
  text: string;
  /** Bytes in the file. */
  bytes: number;
  /** What replaced the file the daemon made (growing-file.ts), or null. */
  replaced: string | null;
}

/** The last `maxBytes` of the file at `path` (empty when it does not exist yet, or was replaced). */
export function readTail(path: string, maxBytes: number): StreamTail {
  const tail = withFile(path, (fd) => {
    const size = fstatSync(fd).size;
    const length = Math.min(size, maxBytes);
    return { text: decodeWholeCharacters(readOpen(fd, size - length, length)), bytes: size, replaced: null };
  });
  return tail ?? { text: '', bytes: 0, replaced: replacedOutput(path) };
}

/** Drops a partial character at either end (continuation bytes first, an unfinished sequence last). */
export function decodeWholeCharacters(bytes: Buffer): string {
  let start = 0;
  while (start < bytes.length && start < 3 && (bytes[start]! & 0xc0) === 0x80) start++;
  let end = bytes.length;
  for (let back = 1; back <= Math.min(3, end - start); back++) {
    const byte = bytes[end - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    if (needed > back) end -= back;
    break;
  }
  return bytes.toString('utf8', start, end);
}
