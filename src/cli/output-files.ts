// Reading a task's output files directly (the CLI runs beside the daemon): the last lines of a
// stream, and what was appended since the last read, as bytes or as whole lines.
import { closeSync, openSync, readSync, fstatSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

const CHUNK_BYTES = 64 * 1024;

/** The size of the file at `path`, 0 when it does not exist yet. */
function sizeOf(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return 0;
  }
  try {
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}

/** The bytes of `path` from `offset` to its end now (empty when it does not exist). */
function readFrom(path: string, offset: number, end?: number): Buffer {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return Buffer.alloc(0);
  }
  try {
    const size = end ?? fstatSync(fd).size;
    if (size <= offset) return Buffer.alloc(0);
    const buffer = Buffer.alloc(size - offset);
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, offset + read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/** Where the last `lines` lines of `path` start (a line cut by the end counts), as a byte offset. */
export function findLastLines(path: string, lines: number): number {
  const size = sizeOf(path);
  if (lines === 0) return size;
  let start = size;
  let found = 0;
  while (start > 0) {
    const from = Math.max(0, start - CHUNK_BYTES);
    const chunk = readFrom(path, from, start);
    for (let index = chunk.length - 1; index >= 0; index--) {
      // The newline that ends the file's last line does not start a line of its own.
      if (chunk[index] === 0x0a && from + index !== size - 1 && ++found === lines) return from + index + 1;
    }
    start = from;
  }
  return 0;
}

/** A stream's file read on from an offset: each read returns what was appended since the last. */
export class OutputFile {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';

  constructor(
    readonly path: string,
    private offset: number,
  ) {}

  /** The bytes appended since the last read. */
  readBytes(): Buffer {
    const bytes = readFrom(this.path, this.offset);
    this.offset += bytes.length;
    return bytes;
  }

  /** The whole lines appended since the last read (without their \n); with `flush`, the unfinished last one too. */
  readLines(flush = false): string[] {
    const text = this.partial + this.decoder.write(this.readBytes()) + (flush ? this.decoder.end() : '');
    const lines = text.split('\n');
    this.partial = lines.pop()!;
    if (flush && this.partial.length > 0) {
      lines.push(this.partial);
      this.partial = '';
    }
    return lines.map((line) => line.replace(/\r$/, ''));
  }

  /** The unfinished last line, as read so far (a prompt, or a line still being written). */
  get pendingLine(): string {
    return this.partial.replace(/\r$/, '');
  }
}
