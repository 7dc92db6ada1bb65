// What output shows of a stream's selected lines: all of them, or the first and last N (head,
// tail); then, within max_bytes, the beginning and the end with a count of what was left out
// between them. Lines are taken as they are read, so a selection of a gigabyte is never held; nor
// are a tail's lines: of those the answer cannot show (all but the last max_bytes) only their
// places in the file are kept, and the few shown at the front are read again from there.
// max_bytes bounds what the answer carries: a control character that JSON writes as six bytes
// (\u0001) counts as six, so that an answer of them is not six times max_bytes (twice, in the text
// and the structured result: a MiB of \x01 made 12.6 MB answers, and 200 at once took the daemon to
// 5.3 GB here). What is told as left out counts the bytes of the file.

/** One line of the answer: a line of output (with its number) or grep's "--" between groups (null). */
export interface SelectedLine {
  text: string;
  line: number | null;
  /** The stream's unfinished last line: no newline after it (yet). */
  partial?: boolean;
  /** Where its bytes are in the stream's file, [start, end), given when `keepsPlaces` (not for "--"). */
  start?: number;
  end?: number;
  /** With grep: the mark after its number (`4321:`, `4320-`), which its text starts with. */
  mark?: ':' | '-';
  /** Its bytes in the file, without the newline, where its text is not them (a terminal's clean text). */
  fileBytes?: number;
}

/** A line to read again: its bytes in the file, and its number and mark for grep's. */
export interface LinePlace {
  start: number;
  end: number;
  line: number | null;
  mark: '' | ':' | '-';
}

/** Reads the lines at `places` (in the order of the file) again: their texts as they were shown. */
export type ReadAgain = (places: readonly LinePlace[]) => string[];

interface Held extends LinePlace {
  /** null: dropped, to be read again from its place. */
  text: string | null;
  partial: boolean;
  seq: number;
  /** Its bytes in the file (a newline among them; grep's number and mark not), and what it costs of max_bytes as shown (answerCost). */
  bytes: number;
  cost: number;
  /** 1 for a line (its first piece, where it is longer than a read's piece); 0 for the rest of one, and for "--". */
  counts: 0 | 1;
}

/** A held line with its text. */
type Shown = Held & { text: string };

export interface SelectionLimits {
  head: number | null;
  tail: number | null;
  maxBytes: number;
}

export interface ShownSelection {
  /** The lines shown, with a note in place of what was left out. */
  text: string;
  firstLine: number | null;
  lastLine: number | null;
  omittedLines: number;
  omittedBytes: number;
}

/** Lines dropped from the front of the latest before the array is cut: the cut copies what is left. */
const DROPPED_BEFORE_CUT = 1024;

/**
 * The lines held at most at each end of what is shown, the front and the back, whatever max_bytes
 * lets in: a line costs its object besides its text, and a megabyte of empty lines was a million of
 * them a call (one call took the daemon from 139 to 558 MB, four to 947 MB). Twice this is the most
 * head or tail asks for, so one whose bytes fit is still shown whole.
 */
export const MAX_LINES_A_SIDE = 50_000;

interface Tally {
  lines: number;
  bytes: number;
  cost: number;
}

const tallyOf = (held: Held[]): Tally => ({
  lines: held.filter((entry) => entry.counts === 1).length,
  bytes: held.reduce((sum, entry) => sum + entry.bytes, 0),
  cost: held.reduce((sum, entry) => sum + entry.cost, 0),
});

// eslint-disable-next-line no-control-regex -- the characters JSON escapes as \u00XX
const SIX_BYTE_ESCAPE = /[\x00-\x07\x0b\x0e-\x1f]/;

/** What a code unit of a line costs of max_bytes: 6 for a control character JSON writes as \u00XX, else its UTF-8 bytes (4 for a surrogate pair, counted at its first half). */
function unitCost(code: number): number {
  if (code < 0x20) return code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? 1 : 6;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code >= 0xdc00 && code <= 0xdfff) return 0;
  return code >= 0xd800 && code <= 0xdbff ? 4 : 3;
}

/** What `text` costs of max_bytes: its UTF-8 bytes, six for each control character JSON writes as \u00XX. */
export const answerCost = (text: string): number => measure(text, true).cost;

/** `text`'s bytes and its cost of max_bytes, with the newline after it unless `partial`. */
function measure(text: string, partial: boolean): { bytes: number; cost: number } {
  const bytes = Buffer.byteLength(text) + (partial ? 0 : 1);
  if (!SIX_BYTE_ESCAPE.test(text)) return { bytes, cost: bytes };
  let cost = partial ? 0 : 1;
  for (let index = 0; index < text.length; index++) cost += unitCost(text.charCodeAt(index));
  return { bytes, cost };
}

export class Selection {
  /** The first lines, up to max_bytes of them (and no further than the head). */
  private readonly first: Held[] = [];
  private firstCost = 0;
  /** The seq after the last line in `first`. */
  private firstEnd = 0;
  /**
   * The latest lines, from `lastStart` on: the last `tail` of them, else the last max_bytes. Dropped
   * from the front by moving `lastStart` (shift() moves every element: a tail of 100,000 lines of
   * 800,000 took 79 s), and the array cut once half of it is dropped. Their texts are kept from
   * `textStart` on, the last max_bytes (what the back can show); before it, a line in the file has
   * only its place (four tails of 100,000 lines of random bytes took the daemon to 468 MB).
   */
  private last: Held[] = [];
  private lastStart = 0;
  private lastBytes = 0;
  private lastCost = 0;
  private lastLines = 0;
  private textStart = 0;
  private textCost = 0;
  private seq = 0;
  /** The last line added, while it is unfinished: a piece of the same number that follows goes on with it. */
  private openLine: number | null = null;
  private readonly all: Tally = { lines: 0, bytes: 0, cost: 0 };
  /** The head's lines, and the seq after its last line. */
  private headLines = 0;
  private headEnd = Number.POSITIVE_INFINITY;

  constructor(private readonly limits: SelectionLimits) {}

  /** Lines come with their places in the file (SelectedLine's start and end): with a tail, whose lines are not all held. */
  get keepsPlaces(): boolean {
    return this.limits.tail !== null;
  }

  /** Head without tail, and its count reached with its last line whole: the selection is complete, reading can stop. */
  get complete(): boolean {
    return (
      this.limits.head !== null &&
      this.limits.tail === null &&
      this.headLines >= this.limits.head &&
      this.openLine === null
    );
  }

  /** The front has all it can show: lines read from now on matter only at the back. */
  get frontFull(): boolean {
    return (
      this.firstCost >= this.limits.maxBytes ||
      this.first.length >= MAX_LINES_A_SIDE ||
      (this.limits.head !== null && this.headLines >= this.limits.head)
    );
  }

  /** How much must follow a skip for the back to be made of what follows: lines (with tail) or bytes. */
  get backNeeds(): { lines: number } | { bytes: number } {
    return this.limits.tail !== null ? { lines: this.limits.tail } : { bytes: this.limits.maxBytes };
  }

  /**
   * Adds the next selected line: a line, or the next piece of a line longer than a read's piece
   * (MAX_LINE_BYTES; its pieces but the last are partial), which counts as no further line.
   */
  add(entry: SelectedLine): void {
    const counts = entry.line === null || entry.line === this.openLine ? 0 : 1;
    this.openLine = entry.partial === true ? entry.line : null;
    const { bytes: shownBytes, cost } = measure(entry.text, entry.partial === true);
    // Its bytes in the file: grep's number and mark are not, nor is its "--".
    const newline = entry.partial === true ? 0 : 1;
    const bytes =
      entry.line === null
        ? 0
        : entry.fileBytes !== undefined
          ? entry.fileBytes + newline
          : entry.mark === undefined
            ? shownBytes
            : shownBytes - `${entry.line}${entry.mark}`.length;
    // One shape for every line (a spread of `entry` cost 1.8 µs a line here).
    const held: Held = {
      text: entry.text,
      line: entry.line,
      partial: entry.partial === true,
      seq: this.seq++,
      bytes,
      cost,
      start: entry.start ?? -1,
      end: entry.end ?? -1,
      mark: entry.mark ?? '',
      counts,
    };
    this.all.lines += counts;
    this.all.bytes += held.bytes;
    this.all.cost += held.cost;
    // The rest of the head's last line, read in pieces, is in the head.
    const headGoesOn = counts === 0 && entry.line !== null && held.seq === this.headEnd;
    if (this.limits.head !== null && (this.headLines < this.limits.head || headGoesOn)) {
      this.headLines += counts;
      if (this.headLines === this.limits.head) this.headEnd = this.seq;
    }
    const frontTakes = this.firstCost < this.limits.maxBytes && this.first.length < MAX_LINES_A_SIDE;
    if (!this.frontFull || (held.seq < this.headEnd && frontTakes)) {
      this.first.push(held);
      this.firstCost += held.cost;
      this.firstEnd = this.seq;
    }
    this.last.push(held);
    this.lastBytes += held.bytes;
    this.lastCost += held.cost;
    this.lastLines += counts;
    this.textCost += held.cost;
    this.trimLast();
    this.dropTexts();
  }

  /**
   * Lines that go by unseen: only once the front is full, and with enough following them (see
   * backNeeds) that none of them could be at the back. They count among those left out.
   */
  skip(lines: number, bytes: number): void {
    // The first newline skipped ends the unfinished line added last, counted already.
    if (this.openLine !== null && lines > 0) lines--;
    this.openLine = null;
    this.seq += lines;
    this.all.lines += lines;
    this.all.bytes += bytes;
    // What they would cost is at least their bytes: only a bound is needed (the front is full).
    this.all.cost += bytes;
    this.last = [];
    this.lastStart = 0;
    this.lastBytes = 0;
    this.lastCost = 0;
    this.lastLines = 0;
    this.textStart = 0;
    this.textCost = 0;
  }

  private trimLast(): void {
    const tail = this.limits.tail;
    while (this.lastStart < this.last.length) {
      const oldest = this.last[this.lastStart]!;
      // With tail: a "--", or the rest of a line whose start was dropped, goes too.
      const drop =
        tail !== null
          ? oldest.counts === 0 || this.lastLines > tail
          : this.lastCost - oldest.cost >= this.limits.maxBytes || this.last.length - this.lastStart > MAX_LINES_A_SIDE;
      if (!drop) break;
      if (this.textStart === this.lastStart) {
        this.textStart++;
        this.textCost -= oldest.cost;
      }
      this.lastStart++;
      this.lastBytes -= oldest.bytes;
      this.lastCost -= oldest.cost;
      this.lastLines -= oldest.counts;
    }
    if (this.lastStart >= DROPPED_BEFORE_CUT && this.lastStart * 2 >= this.last.length) {
      this.last = this.last.slice(this.lastStart);
      this.textStart -= this.lastStart;
      this.lastStart = 0;
    }
  }

  /** Drops the texts of the latest lines before the last max_bytes, those with a place to read them again from. */
  private dropTexts(): void {
    while (this.textStart < this.last.length) {
      const oldest = this.last[this.textStart]!;
      if (this.textCost - oldest.cost < this.limits.maxBytes) break;
      if (oldest.start >= 0 && oldest.seq >= this.firstEnd) oldest.text = null;
      this.textStart++;
      this.textCost -= oldest.cost;
    }
  }

  /** The selection as shown within the limits; `readAgain` reads the lines shown whose texts were dropped. */
  show(readAgain?: ReadAgain): ShownSelection {
    const { head, tail, maxBytes } = this.limits;
    // The selection's own size, and the held lines at its front and its back.
    // With head and tail, what lies between them counts as left out.
    let size: Tally = this.all;
    let front = this.first.filter((held) => held.seq < this.headEnd);
    let back = this.last.slice(this.lastStart);
    if (tail !== null && head === null) {
      size = { lines: this.lastLines, bytes: this.lastBytes, cost: this.lastCost };
      front = back;
      back = [];
    }
    const lastFront = front[front.length - 1]?.seq ?? -1;
    back = back.filter((held) => held.seq > lastFront);
    if (size.cost <= maxBytes && front.length + back.length === size.lines + this.separators(front, back)) {
      const all = withTexts([...front, ...back], readAgain);
      return describe(all, [], size, size);
    }
    const shownFront = takeWithin(withTexts(reach(front, maxBytes / 2, false), readAgain), maxBytes / 2, false);
    const restOfFront = front.slice(shownFront.length);
    const backFrom = back.length > 0 ? back : restOfFront;
    const backBudget = maxBytes - tallyOf(shownFront).cost;
    const shownBack = takeWithin(withTexts(reach(backFrom, backBudget, true), readAgain), backBudget, true);
    return describe(shownFront, shownBack, size, tallyOf([...shownFront, ...shownBack]));
  }

  private separators(front: Held[], back: Held[]): number {
    return front.length + back.length - tallyOf([...front, ...back]).lines;
  }
}

/** The lines of `held`, from its start (or, `fromEnd`, its end), that takeWithin looks at for `budget`: those within it and the next. */
function reach(held: Held[], budget: number, fromEnd: boolean): Held[] {
  let cost = 0;
  let count = 0;
  while (count < held.length && cost <= budget) {
    cost += held[fromEnd ? held.length - 1 - count : count]!.cost;
    count++;
  }
  return fromEnd ? held.slice(held.length - count) : held.slice(0, count);
}

/** `held` with the texts of all: those dropped read again. */
function withTexts(held: Held[], readAgain: ReadAgain | undefined): Shown[] {
  const dropped = held.filter((entry) => entry.text === null);
  if (dropped.length > 0) {
    if (readAgain === undefined) throw new Error('the texts of lines were dropped, and nothing reads them again');
    const texts = readAgain(dropped);
    dropped.forEach((entry, index) => (entry.text = texts[index] ?? ''));
  }
  return held as Shown[];
}

function describe(front: Shown[], back: Shown[], size: Tally, shown: Tally): ShownSelection {
  const omittedLines = Math.max(0, size.lines - shown.lines);
  const omittedBytes = Math.max(0, size.bytes - shown.bytes);
  const line = (held: Shown) => (held.partial ? held.text : `${held.text}\n`);
  // Joined without spreading: a spread of a hundred thousand lines into push() overflows the stack.
  const note =
    omittedLines > 0 || omittedBytes > 0 ? [`[... ${omittedLines} lines (${omittedBytes} bytes) left out ...]\n`] : [];
  const parts = front.map(line).concat(note, back.map(line));
  const numbered = [...front, ...back].filter((held) => held.line !== null);
  return {
    text: parts.join(''),
    firstLine: numbered[0]?.line ?? null,
    lastLine: numbered[numbered.length - 1]?.line ?? null,
    omittedLines,
    omittedBytes,
  };
}

/** Lines from the start (or, `fromEnd`, the end) of `held` within `budget` of max_bytes; of a longer first one, its part that fits. */
function takeWithin(held: Shown[], budget: number, fromEnd: boolean): Shown[] {
  const taken: Shown[] = [];
  let cost = 0;
  for (let index = 0; index < held.length; index++) {
    const next = held[fromEnd ? held.length - 1 - index : index]!;
    if (cost + next.cost > budget) {
      if (taken.length === 0 && budget > 1) taken.push(cutLine(next, budget, fromEnd));
      break;
    }
    taken.push(next);
    cost += next.cost;
  }
  return fromEnd ? taken.reverse() : taken;
}

/**
 * A line longer than the budget: its start (or end) within it, cut at a character boundary; its
 * number stays. Its bytes in the file are those shown but grep's number and mark, where they are
 * still there (an end cut off with its start goes without them).
 */
function cutLine(held: Shown, budget: number, fromEnd: boolean): Shown {
  const keep = Math.max(0, Math.floor(budget) - 1);
  const text = SIX_BYTE_ESCAPE.test(held.text) ? cutCost(held.text, keep, fromEnd) : cutBytes(held.text, keep, fromEnd);
  const shown = measure(text, held.partial);
  const mark = measure(held.text, held.partial).bytes - held.bytes;
  const cutAway = Buffer.byteLength(held.text) - Buffer.byteLength(text);
  const markLeft = fromEnd ? Math.max(0, mark - cutAway) : Math.min(mark, Buffer.byteLength(text));
  return { ...held, text, cost: shown.cost, bytes: Math.min(held.bytes, Math.max(0, shown.bytes - markLeft)) };
}

/** The start (or end) of `text` within `keep` UTF-8 bytes, whole characters only. */
function cutBytes(text: string, keep: number, fromEnd: boolean): string {
  const bytes = Buffer.from(text);
  const slice = fromEnd ? bytes.subarray(bytes.length - keep) : bytes.subarray(0, keep);
  return slice.toString('utf8').replace(fromEnd ? /^\uFFFD+/ : /\uFFFD+$/, '');
}

/** The start (or end) of `text` within `keep` of max_bytes (unitCost), whole characters only. */
function cutCost(text: string, keep: number, fromEnd: boolean): string {
  let cost = 0;
  if (!fromEnd) {
    let end = 0;
    while (end < text.length) {
      const unit = unitCost(text.charCodeAt(end));
      if (cost + unit > keep) break;
      cost += unit;
      end += unit === 4 ? 2 : 1;
    }
    return text.slice(0, end);
  }
  let start = text.length;
  while (start > 0) {
    // A low surrogate costs nothing by itself: its pair is counted at its first half.
    const pair = start >= 2 && unitCost(text.charCodeAt(start - 2)) === 4 ? 2 : 1;
    const unit = unitCost(text.charCodeAt(start - pair));
    if (cost + unit > keep) break;
    cost += unit;
    start -= pair;
  }
  return text.slice(start);
}
