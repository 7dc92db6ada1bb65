// Reads one stream of a task from a place to the end written so far, a chunk of whole lines at a
// time (a turn of the event loop between chunks), and hands the lines it selects to a Selection:
// every line, or with grep the matching lines and their context, numbered as grep -n numbers them.
// With a tail, each line comes with its place in the file, where the lines shown whose texts the
// selection dropped are read again before the file is closed.
import { ByteLines, TextLines, type ChunkLines } from './chunk-lines.js';
import { closeSync } from 'node:fs';
import { openOutput, readInto, readOpen } from './growing-file.js';
import { countNewlines } from './newline-count.js';
import type { StreamPlace } from './output-cursor.js';
import type { LinePlace, ReadAgain, Selection, ShownSelection } from './output-selection.js';
import { unfinishedEscapeStart } from './terminal-text.js';

const CHUNK_BYTES = 4 * 1024 * 1024;
/** A line longer than this is read in pieces of this size, each shown with the line's number, counted as one line. */
const MAX_LINE_BYTES = 1024 * 1024;

export interface LineGrep {
  /** The expression with the g and m flags: where in a chunk of lines a match may start. */
  pattern: RegExp;
  /** The expression as given: whether one line matches, as RegExp#test on that line alone. */
  line: RegExp;
  /** Text every match contains, searched for in the bytes first; null: the expression searches. */
  literal: Buffer | null;
  context: number;
}

export interface ScanRequest {
  path: string;
  from: StreamPlace;
  /** The stream's size when the read began: it stops there. */
  to: number;
  /** How lines are shown: as written (raw), without a CR before the newline (plain), or a terminal's clean text. */
  mode: 'plain' | 'raw' | 'terminal';
  /** The width of the terminal, which clean text wraps at. */
  columns: number;
  grep: LineGrep | null;
  selection: Selection;
  /** The stream is complete (its task ended): an unfinished last line is taken whole. */
  final: boolean;
}

export interface ScanResult {
  /** The place read up to. */
  end: StreamPlace;
  /** Lines grep matched. */
  matches: number;
  shown: ShownSelection;
}

/** Reads the lines of `request` into its selection, and shows it. */
export async function scanStream(request: ScanRequest): Promise<ScanResult> {
  const fd = openOutput(request.path);
  // Not created yet, or replaced.
  if (fd === null) return { end: request.from, matches: 0, shown: request.selection.show() };
  const walker = new LineWalker(request);
  try {
    const end = await scanOpen(fd, request, walker);
    return { end, matches: walker.matchCount, shown: request.selection.show(readAgain(fd, request)) };
  } finally {
    closeSync(fd);
  }
}

/** Reads lines of the open file again at their places, and makes their texts as the walk made them. */
function readAgain(fd: number, request: ScanRequest): ReadAgain {
  return (places: readonly LinePlace[]) => {
    const texts: string[] = [];
    for (let index = 0; index < places.length;) {
      // Lines near each other in one read, of a chunk at most (a longer line alone).
      const from = places[index]!.start;
      let last = index;
      while (last + 1 < places.length && places[last + 1]!.end - from <= CHUNK_BYTES) last++;
      const bytes = readOpen(fd, from, places[last]!.end - from);
      for (; index <= last; index++) {
        const place = places[index]!;
        const text = lineText(bytes.subarray(place.start - from, place.end - from), request);
        texts.push(place.mark === '' ? text : `${place.line}${place.mark}${text}`);
      }
    }
    return texts;
  };
}

/** One line's bytes as the walk shows them. */
function lineText(bytes: Buffer, { mode, columns }: ScanRequest): string {
  const chunk =
    mode === 'terminal' ? new TextLines(bytes, null, mode, columns) : new ByteLines(bytes, null, mode === 'raw');
  return chunk.lineText(0, chunk.length);
}

async function scanOpen(fd: number, request: ScanRequest, walker: LineWalker): Promise<StreamPlace> {
  // One buffer for the whole read: a fresh one a chunk (and a copy to join the line cut between
  // chunks) cost a third of grep's time over a 1 GiB log. What was not walked yet stays at its start.
  const work = Buffer.allocUnsafe(2 * CHUNK_BYTES);
  let carried = 0;
  let offset = request.from.offset;
  let line = request.from.line;
  while (offset < request.to) {
    const read = readInto(fd, work, carried, Math.min(CHUNK_BYTES, request.to - offset, work.length - carried), offset);
    if (read === 0) break;
    const start = offset - carried;
    offset += read;
    const data = work.subarray(0, carried + read);
    let whole = data.lastIndexOf(0x0a) + 1;
    if (whole === 0 && data.length >= MAX_LINE_BYTES) whole = characterBoundary(data, MAX_LINE_BYTES);
    if (whole > 0) {
      const stop = walker.walk(data.subarray(0, whole), start, line, false);
      if (stop !== null) return { offset: start + stop.bytes, line: stop.line };
      line += countNewlines(data.subarray(0, whole));
      if (request.selection.complete) return { offset: start + whole, line };
    }
    carried = data.length - whole;
    work.copyWithin(0, whole, data.length);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const carry = work.subarray(0, carried);
  const last = request.final ? carry.length : takeable(carry, request.mode);
  if (last > 0) {
    const stop = walker.walk(carry.subarray(0, last), offset - carry.length, line, true);
    if (stop !== null) return { offset: offset - carry.length + stop.bytes, line: stop.line };
  }
  return { offset: offset - carry.length + last, line };
}

/** How much of an unfinished last line can be shown now: not a partial character, nor (from a terminal) a partial escape sequence. */
function takeable(carry: Buffer, mode: ScanRequest['mode']): number {
  let end = characterBoundary(carry, carry.length);
  if (mode === 'terminal')
    end = Buffer.byteLength(
      carry.toString('utf8', 0, end).slice(0, unfinishedEscapeStart(carry.toString('utf8', 0, end))),
    );
  return end;
}

/** The largest offset at most `limit` that does not split a UTF-8 character. */
export function characterBoundary(bytes: Buffer, limit: number): number {
  let end = Math.min(limit, bytes.length);
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const byte = bytes[end - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    if (needed > back) end -= back;
    break;
  }
  return end;
}

/** A line of a chunk: its text, number, and bytes in the file, [start, end) (-1 when the selection keeps no places). */
interface WalkedLine {
  text: string;
  line: number;
  partial: boolean;
  start: number;
  end: number;
  /** A terminal's line: its bytes in the file (its text is its clean text). */
  fileBytes?: number;
}

/** Walks chunks of whole lines, carrying grep's context from one chunk to the next. */
class LineWalker {
  readonly selection: Selection;
  /** Lines grep matched. */
  matchCount = 0;
  private lastMatched = 0;
  /** Lines up to this number are after-context of a match. */
  private contextUntil = 0;
  private lastShown = 0;
  /** The last lines of the previous chunk, for the context before a match at a chunk's start. */
  private previous: WalkedLine[] = [];
  /** The file offset of the chunk walked. */
  private offset = 0;

  constructor(private readonly request: ScanRequest) {
    this.selection = request.selection;
  }

  /** Walks `bytes` (whole lines, the last unfinished when `partial`) from line `first` at file offset `offset`; where the selection completed, or null. */
  walk(bytes: Buffer, offset: number, first: number, partial: boolean): { bytes: number; line: number } | null {
    const { grep, mode } = this.request;
    this.offset = offset;
    const chunk: ChunkLines =
      mode === 'terminal' || (grep !== null && grep.literal === null)
        ? new TextLines(bytes, grep?.pattern ?? null, mode, this.request.columns)
        : new ByteLines(bytes, grep?.literal ?? null, mode === 'raw');
    let at = grep === null ? this.skipUnseen(chunk) : 0;
    let line = first + chunk.countNewlines(0, at);
    while (at < chunk.length) {
      const start = line <= this.contextUntil || grep === null ? at : chunk.nextCandidate(at);
      if (start === -1) break;
      const lineStart = chunk.previousNewline(start - 1) + 1;
      // A match of the whole chunk's end after its last newline (`^$` in m mode) is in no line.
      if (lineStart >= chunk.length) break;
      const number = line + chunk.countNewlines(at, lineStart);
      const newline = chunk.nextNewline(lineStart);
      const lineEnd = newline === -1 ? chunk.length : newline;
      const walked = this.lineOf(chunk, number - first, lineStart, lineEnd, number, newline === -1);
      if (grep === null) this.selection.add(walked);
      else if (this.matches(walked.text)) this.showMatch(chunk, lineStart, walked, first);
      else if (number <= this.contextUntil) this.show(walked, '-');
      at = lineEnd + 1;
      line = number + 1;
      if (this.selection.complete)
        return {
          bytes: this.bytesUpTo(chunk, bytes, Math.min(at, chunk.length)),
          line: newline === -1 ? number : line,
        };
    }
    if (grep !== null && grep.context > 0 && !partial) this.keepPrevious(chunk, first);
    return null;
  }

  private matches(text: string): boolean {
    return this.request.grep!.line.test(text);
  }

  /** The chunk's line `index`, at places [start, end), numbered `line`; with its bytes in the file when the selection keeps places. */
  private lineOf(
    chunk: ChunkLines,
    index: number,
    start: number,
    end: number,
    line: number,
    partial: boolean,
  ): WalkedLine {
    const text = chunk.lineText(start, end);
    const fileBytes = this.request.mode === 'terminal' ? chunk.bytesOf(start, end) : undefined;
    if (!this.selection.keepsPlaces) return { text, line, partial, start: -1, end: -1, fileBytes };
    const [from, to] = chunk.byteSpan(index, start, end);
    return { text, line, partial, start: this.offset + from, end: this.offset + to, fileBytes };
  }

  /** A matching line, after the lines before it not shown yet (from this chunk or the last). */
  private showMatch(chunk: ChunkLines, lineStart: number, match: WalkedLine, first: number): void {
    const number = match.line;
    const context = this.request.grep!.context;
    const before: WalkedLine[] = [];
    let end = lineStart - 1;
    for (let back = number - 1; back >= Math.max(1, number - context, this.lastShown + 1); back--) {
      if (back < first) {
        const kept = this.previous.find((entry) => entry.line === back);
        if (kept) before.unshift(kept);
        continue;
      }
      const start = chunk.previousNewline(end - 1) + 1;
      before.unshift(this.lineOf(chunk, back - first, start, end, back, false));
      end = start - 1;
    }
    for (const entry of before) this.show(entry, '-');
    this.show(match, ':');
    // The pieces of a line longer than a read's piece are one line: it matched once.
    if (number !== this.lastMatched) this.matchCount++;
    this.lastMatched = number;
    this.contextUntil = number + context;
  }

  private show({ text, line, partial, start, end, fileBytes }: WalkedLine, mark: ':' | '-'): void {
    if (this.request.grep!.context > 0 && this.lastShown > 0 && line > this.lastShown + 1)
      this.selection.add({ text: '--', line: null });
    this.selection.add({ text: `${line}${mark}${text}`, line, partial, start, end, mark, fileBytes });
    this.lastShown = line;
  }

  /** Keeps the chunk's last lines for the context before a match at the next one's start. */
  private keepPrevious(chunk: ChunkLines, first: number): void {
    const total = chunk.countNewlines(0, chunk.length);
    const kept: WalkedLine[] = [];
    let end = chunk.length - 1;
    for (let index = 0; index < this.request.grep!.context && end >= 0; index++) {
      const start = chunk.previousNewline(end - 1) + 1;
      const line = first + total - 1 - index;
      kept.unshift(this.lineOf(chunk, line - first, start, end, line, false));
      end = start - 1;
    }
    this.previous = kept;
  }

  /** Without grep, once the front is full: lines that cannot reach the back are counted, not read. */
  private skipUnseen(chunk: ChunkLines): number {
    if (!this.selection.frontFull || this.selection.complete) return 0;
    const needs = this.selection.backNeeds;
    let cut: number;
    if ('bytes' in needs) {
      const want = chunk.length - needs.bytes - 1;
      if (want <= 0) return 0;
      cut = chunk.previousNewline(want) + 1;
    } else {
      cut = chunk.length;
      for (let count = 0; count <= needs.lines && cut > 0; count++) cut = chunk.previousNewline(cut - 2) + 1;
    }
    if (cut <= 0) return 0;
    this.selection.skip(chunk.countNewlines(0, cut), chunk.bytesOf(0, cut));
    return cut;
  }

  /** The bytes of the chunk's first `place` units. */
  private bytesUpTo(chunk: ChunkLines, bytes: Buffer, place: number): number {
    if (chunk instanceof ByteLines) return place;
    // Lines of text are the file's lines: count as many newlines in the bytes.
    const lines = chunk.countNewlines(0, place);
    let at = 0;
    for (let index = 0; index < lines; index++) at = bytes.indexOf(0x0a, at) + 1;
    return place >= chunk.length ? bytes.length : at;
  }
}
