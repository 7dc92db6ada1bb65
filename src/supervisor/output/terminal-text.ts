// Clean text of a terminal's output, a line at a time: escape sequences removed, a line that "\r"
// went back over (a progress bar) as it finally showed, backspaces applied, other controls dropped.
// Only what happens within a line is followed; for what a whole screen shows, see output's screen.
// A line written past the terminal's width wraps onto rows of that width: the cursor moves within
// its row, as a terminal's does, so no sequence can move it further than the width.

const ESC = 0x1b;
const TAB_STOP = 8;
/**
 * The columns of a clean line kept: output shows at most 1 MiB of a line (max_bytes), and a line
 * is built as an array of its columns: 60 MB of "\tx" in one line, 270 million columns, took four
 * output calls to 1.6 GB. What is written past it is dropped, as at a terminal's edge.
 */
export const MAX_CLEAN_COLUMNS = 1024 * 1024;

/** Where the escape sequence starting at `start` (an ESC) ends, exclusive; -1 when `text` ends before it does. */
export function escapeEnd(text: string, start: number): number {
  const kind = text.charCodeAt(start + 1);
  if (Number.isNaN(kind)) return -1;
  if (kind === 0x5b) {
    // CSI: parameters and intermediates, then a final byte from @ to ~
    for (let at = start + 2; at < text.length; at++) {
      const code = text.charCodeAt(at);
      if (code >= 0x40 && code <= 0x7e) return at + 1;
      if (code < 0x20 || code > 0x3f) return at; // malformed: stop before it
    }
    return -1;
  }
  if (kind === 0x5d || kind === 0x50 || kind === 0x58 || kind === 0x5e || kind === 0x5f) {
    // OSC, DCS, SOS, PM, APC: a string ended by BEL or ESC \
    for (let at = start + 2; at < text.length; at++) {
      const code = text.charCodeAt(at);
      if (code === 0x07) return at + 1;
      if (code === ESC && text.charCodeAt(at + 1) === 0x5c) return at + 2;
    }
    return -1;
  }
  // ESC, any intermediates (space to /), then one final character
  let at = start + 1;
  while (at < text.length && text.charCodeAt(at) >= 0x20 && text.charCodeAt(at) <= 0x2f) at++;
  return at < text.length ? at + 1 : -1;
}

/** The CSI sequences that move along or erase a line, applied to the line being built; returns the new column. */
function applyLineControl(sequence: string, line: string[], column: number, columns: number): number {
  const final = sequence[sequence.length - 1];
  const parameter = Number.parseInt(sequence.slice(2, -1), 10);
  const count = Number.isNaN(parameter) || parameter < 1 ? 1 : parameter;
  const rowStart = column - (column % columns);
  if (final === 'K') {
    const mode = Number.isNaN(parameter) ? 0 : parameter;
    if (mode === 0) line.length = Math.min(line.length, column);
    else if (mode === 1) for (let at = 0; at <= column && at < line.length; at++) line[at] = ' ';
    else line.length = 0;
    return column;
  }
  if (final === 'G') return rowStart + Math.min(count, columns) - 1;
  if (final === 'C') return Math.min(column + count, rowStart + columns - 1);
  if (final === 'D') return Math.max(rowStart, column - count);
  return column;
}

/**
 * One line of terminal output (without its "\n") as it finally showed on a terminal `columns`
 * wide. It is at most eight columns a character written plus one row (a tab's widest step, and
 * one move across the terminal): cursor moves alone cannot make it long; and MAX_CLEAN_COLUMNS.
 */
export function cleanTerminalLine(raw: string, columns: number): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this looks for
  if (!/[\x00-\x1f\x7f]/.test(raw)) return raw;
  const width = Math.max(1, columns);
  const limit = Math.min(raw.length * TAB_STOP + width, MAX_CLEAN_COLUMNS);
  const line: string[] = [];
  let column = 0;
  for (let at = 0; at < raw.length;) {
    const code = raw.charCodeAt(at);
    if (code === ESC) {
      const found = escapeEnd(raw, at);
      const end = found === -1 ? raw.length : found;
      if (raw.charCodeAt(at + 1) === 0x5b) column = applyLineControl(raw.slice(at, end), line, column, width);
      at = end;
      continue;
    }
    if (code === 0x0d) column = 0;
    else if (code === 0x08) column = Math.max(0, column - 1);
    else if (code === 0x09)
      column = Math.min((Math.floor(column / TAB_STOP) + 1) * TAB_STOP, column - (column % width) + width - 1);
    else if (code >= 0x20 && code !== 0x7f) {
      // A whole code point (a surrogate pair stays together) takes one column.
      const size = code >= 0xd800 && code <= 0xdbff && at + 1 < raw.length ? 2 : 1;
      if (column < limit) {
        while (line.length < column) line.push(' ');
        line[column++] = raw.slice(at, at + size);
      }
      at += size;
      continue;
    }
    at++;
  }
  return line.join('');
}

/** Where an unfinished escape sequence at the end of `text` starts (it is read with what follows), else `text.length`. */
export function unfinishedEscapeStart(text: string): number {
  const last = text.lastIndexOf('\x1b');
  return last !== -1 && text.length - last <= 256 && escapeEnd(text, last) === -1 ? last : text.length;
}
