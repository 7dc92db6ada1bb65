// A chunk of a stream, whole lines, as the reader walks it: newlines found and counted, lines
// decoded, the next place a pattern may match. Bytes where they can stay bytes (search for a
// literal, count by SIMD), text where a regular expression or a terminal's cleaning needs it.
import { countNewlines } from './newline-count.js';
import { cleanTerminalLine } from './terminal-text.js';

export interface ChunkLines {
  /** Its length, in the units of its places (bytes, or UTF-16 code units). */
  readonly length: number;
  /** The place of the next "\n" at or after `from`, or -1. */
  nextNewline(from: number): number;
  /** The place of the last "\n" at or before `from`, or -1. */
  previousNewline(from: number): number;
  /** Newlines in [start, end). */
  countNewlines(start: number, end: number): number;
  /** Bytes of [start, end) as they are shown. */
  bytesOf(start: number, end: number): number;
  /** The line [start, end) as it is shown. */
  lineText(start: number, end: number): string;
  /** The first place at or after `from` that a match may start on, or -1; `from` itself without a pattern. */
  nextCandidate(from: number): number;
  /** Where the chunk's line `index` (from 0), at places [start, end), is in its bytes: [start, end). */
  byteSpan(index: number, start: number, end: number): [number, number];
}

/** The line without the "\r" a terminal or a CRLF file ends it with (raw keeps it). */
const withoutReturn = (text: string) => (text.endsWith('\r') ? text.slice(0, -1) : text);

/** A chunk kept as bytes: searched for a literal with Buffer#indexOf, only matching lines decoded. */
export class ByteLines implements ChunkLines {
  readonly length: number;

  constructor(
    private readonly bytes: Buffer,
    private readonly literal: Buffer | null,
    private readonly raw: boolean,
  ) {
    this.length = bytes.length;
  }

  nextNewline(from: number): number {
    return this.bytes.indexOf(0x0a, from);
  }

  previousNewline(from: number): number {
    return from < 0 ? -1 : this.bytes.lastIndexOf(0x0a, from);
  }

  countNewlines(start: number, end: number): number {
    return countNewlines(this.bytes.subarray(start, end));
  }

  bytesOf(start: number, end: number): number {
    return end - start;
  }

  lineText(start: number, end: number): string {
    const text = this.bytes.toString('utf8', start, end);
    return this.raw ? text : withoutReturn(text);
  }

  nextCandidate(from: number): number {
    return this.literal === null ? from : this.bytes.indexOf(this.literal, from);
  }

  byteSpan(_index: number, start: number, end: number): [number, number] {
    return [start, end];
  }
}

/** The text a pattern searches at a time (TextLines#nextCandidate), to the end of the line it ends in. */
const WINDOW_CHARS = 64 * 1024;

/** TextLines#byteSpan skips blocks of this many bytes when the line asked for is more than this many lines ahead. */
const SPAN_BLOCK_BYTES = 64 * 1024;
const SPAN_BLOCK_LINES = 256;

/**
 * A chunk decoded to text, searched with the expression itself; from a terminal `columns` wide, each
 * line cleaned as it is asked for (lineText), and every line a candidate for a pattern. Cleaned
 * whole, a chunk of 9-byte lines that move the cursor 999 columns was 111 times its size: one
 * `output` of a 1.8 MB file took the daemon from 105 to 549 MB, of 10.8 MB to 1.71 GB.
 */
export class TextLines implements ChunkLines {
  readonly length: number;
  private readonly text: string;
  /** The lines' starts in the bytes are found from the last one asked for: a line start, and the newlines before it. */
  private spanAt = 0;
  private spanLine = 0;

  constructor(
    private readonly bytes: Buffer,
    private readonly pattern: RegExp | null,
    private readonly mode: 'plain' | 'raw' | 'terminal',
    private readonly columns: number,
  ) {
    this.text = bytes.toString('utf8');
    this.length = this.text.length;
  }

  nextNewline(from: number): number {
    return this.text.indexOf('\n', from);
  }

  previousNewline(from: number): number {
    return from < 0 ? -1 : this.text.lastIndexOf('\n', from);
  }

  countNewlines(start: number, end: number): number {
    let count = 0;
    for (let at = this.text.indexOf('\n', start); at !== -1 && at < end; at = this.text.indexOf('\n', at + 1)) count++;
    return count;
  }

  /** Bytes of [start, end) in the file (a terminal's line as written, before it is cleaned). */
  bytesOf(start: number, end: number): number {
    return Buffer.byteLength(this.text.slice(start, end));
  }

  lineText(start: number, end: number): string {
    const text = this.text.slice(start, end);
    // Cleaning keeps every line a line: the line numbers stay the file's.
    if (this.mode === 'terminal') return cleanTerminalLine(text, this.columns);
    return this.mode === 'plain' ? withoutReturn(text) : text;
  }

  /**
   * Searched a window of whole lines at a time: V8's linear engine, which takes over a match that
   * backtracks too much, holds about 220 bytes for each character of the text it is given ((a+)+$
   * over a chunk of 4 MiB of `a` lines took the reader 900 MB, and one grep the daemon to 1 GB). A
   * window's edges are lines' (a pattern tests each candidate line again: one that matches only
   * at a window's end, as `$` may, is not taken).
   */
  nextCandidate(from: number): number {
    if (this.pattern === null || this.mode === 'terminal') return from;
    for (let start = from; start < this.length;) {
      const newline = start + WINDOW_CHARS >= this.length ? -1 : this.text.indexOf('\n', start + WINDOW_CHARS);
      const end = newline === -1 ? this.length : newline + 1;
      this.pattern.lastIndex = 0;
      const found = this.pattern.exec(start === 0 && end === this.length ? this.text : this.text.slice(start, end));
      if (found !== null) return start + found.index;
      start = end;
    }
    return -1;
  }

  byteSpan(index: number): [number, number] {
    const { bytes } = this;
    // Far ahead (grep between matches): whole blocks counted by SIMD, not a newline at a time.
    while (index - this.spanLine > SPAN_BLOCK_LINES && this.spanAt + SPAN_BLOCK_BYTES < bytes.length) {
      const count = countNewlines(bytes.subarray(this.spanAt, this.spanAt + SPAN_BLOCK_BYTES));
      if (count === 0 || this.spanLine + count >= index) break;
      this.spanAt = bytes.lastIndexOf(0x0a, this.spanAt + SPAN_BLOCK_BYTES - 1) + 1;
      this.spanLine += count;
    }
    for (; this.spanLine < index && this.spanAt < bytes.length; this.spanLine++)
      this.spanAt = bytes.indexOf(0x0a, this.spanAt) + 1 || bytes.length;
    for (; this.spanLine > index; this.spanLine--)
      this.spanAt = this.spanAt < 2 ? 0 : bytes.lastIndexOf(0x0a, this.spanAt - 2) + 1;
    const newline = bytes.indexOf(0x0a, this.spanAt);
    return [this.spanAt, newline === -1 ? bytes.length : newline];
  }
}
