// A pty task's output as the screen's emulator takes it: as written, but with what would cost the
// emulator without bound cut down to the terminal. xterm.js takes a CSI's numbers up to 2^31 and
// loops that many times for a count (lines to scroll or insert, a character to repeat, tab stops):
// ESC[2147483647S alone ran for hours. Those numbers are clamped to the larger of the terminal's
// width and height, and 255 (a count past the screen does no more than one across it; 255 keeps
// colours); a private CSI's (ESC[?1049h) are a mode's, and stay. An OSC, DCS, SOS, PM or APC
// string keeps its first 4096 characters: xterm.js gathers ten million of an unfinished one, which
// took 317 MB of heap. The states follow xterm.js's parser (its VT500 table), so that every CSI it
// runs went through here; elsewhere the text passes as it is, but for combining marks: a cell
// keeps the marks that follow its character, without bound in xterm.js (four letters each followed
// by 8 million U+0301 took the daemon to 2 GB, and made screens of 85 MB), so a run of them keeps
// its first 30, as Unicode's Stream-Safe Text Format (UAX #15) does.

/** The characters an OSC, DCS, SOS, PM or APC string keeps (a title, a link, a colour). */
const KEPT_STRING_CHARS = 4096;
const MAX_PARAMETER = 0x7fffffff;
/** Where, in the ground state, something other than text may start. */
// eslint-disable-next-line no-control-regex -- control characters are what this looks for
const SEQUENCE_START = /[\x1b\x90\x98\x9b\x9d-\x9f]/g;
/** A whole CSI with nothing but its parameters inside (most of what programs print): read in one step. */
// eslint-disable-next-line no-control-regex -- as above
const WHOLE_CSI = /\x1b\[([<=>?]?)([0-9;:]*)[\x20-\x2f]*[\x40-\x7e]/y;
/** What ends or breaks into a string: ESC, CAN, SUB or a C1 control, and BEL too in an OSC. */
// eslint-disable-next-line no-control-regex -- as above
const STRING_STOP = /[\x18\x1a\x1b\x80-\x9f]/g;
// eslint-disable-next-line no-control-regex -- as above
const OSC_STOP = /[\x07\x18\x1a\x1b\x80-\x9f]/g;
/** The bound is 255 or more: a number of two digits is always kept. */
const LONG_NUMBER = /[0-9]{3}/;
/** The combining marks a run keeps (UAX #15's Stream-Safe Text Format), and runs of them. */
const KEPT_MARKS = 30;
const MARKS = /\p{M}+/gu;

const enum State {
  Ground,
  Escape,
  EscapeIntermediate,
  Csi,
  String,
}

/** A C0 control the parser carries out in the middle of a sequence (all but CAN, SUB and ESC). */
const isExecuted = (code: number) => code <= 0x17 || code === 0x19 || (code >= 0x1c && code <= 0x1f);

export class ScreenInput {
  private state = State.Ground;
  /** In a CSI: no parameter character yet (a private marker may come), a private one, the number being read (-1: none). */
  private entry = true;
  private isPrivate = false;
  private number = -1;
  /** In a string: an OSC (BEL ends it too), and the characters of it passed on. */
  private osc = false;
  private kept = 0;

  /** The largest number a CSI keeps. */
  private readonly bound: number;
  /** Combining marks at the end of the text filtered last: a run that goes on in the next keeps fewer. */
  private marksBefore = 0;

  /** For a terminal whose larger side is `largestSide`. */
  constructor(largestSide: number) {
    this.bound = Math.max(255, largestSide);
  }

  /** The next piece of the output (decoded text, any cut), as the emulator is to take it. */
  filter(text: string): string {
    const parts: string[] = [];
    let passed = 0; // the text from here on passes as it is, up to what is taken apart
    for (let at = 0; at < text.length; at++) {
      if (this.state === State.Ground) {
        SEQUENCE_START.lastIndex = at;
        const found = SEQUENCE_START.exec(text);
        if (found === null) break;
        at = found.index;
        WHOLE_CSI.lastIndex = at;
        const csi = WHOLE_CSI.exec(text);
        if (csi !== null) {
          if (csi[1] === '' && LONG_NUMBER.test(csi[2]!)) {
            parts.push(text.slice(passed, at), this.clamped(csi[0]));
            passed = WHOLE_CSI.lastIndex;
          }
          at = WHOLE_CSI.lastIndex - 1;
          continue;
        }
      } else if (this.state === State.String) {
        // A string's body, up to what ends it, in one search: its first characters kept, the rest dropped.
        const stop = this.stringBodyEnd(text, at);
        if (stop > at) {
          const kept = Math.min(stop - at, Math.max(0, KEPT_STRING_CHARS - this.kept));
          this.kept += stop - at;
          parts.push(text.slice(passed, at + kept));
          passed = stop;
          at = stop - 1;
          continue;
        }
      }
      parts.push(text.slice(passed, at));
      this.take(text[at]!, text.charCodeAt(at), parts);
      passed = at + 1;
    }
    parts.push(text.slice(passed));
    return this.capMarks(parts.join(''));
  }

  /** `text` with each run of combining marks cut to its first KEPT_MARKS, counting those the last text ended in. */
  private capMarks(text: string): string {
    let endsInMarks = 0;
    const capped = text.replace(MARKS, (run: string, at: number) => {
      const before = at === 0 ? this.marksBefore : 0;
      // The first marks (code points) that fit, and whether any does not: never the whole run read.
      let kept = 0;
      let end = 0;
      while (end < run.length && before + kept < KEPT_MARKS) {
        end += (run.codePointAt(end) ?? 0) > 0xffff ? 2 : 1;
        kept++;
      }
      if (at + run.length === text.length) endsInMarks = end < run.length ? KEPT_MARKS : before + kept;
      return end < run.length ? run.slice(0, end) : run;
    });
    this.marksBefore = endsInMarks;
    return capped;
  }

  /** Where the string's body that starts at `at` ends: the next character that ends or breaks into it, or the text's end. */
  private stringBodyEnd(text: string, at: number): number {
    const stop = this.osc ? OSC_STOP : STRING_STOP;
    stop.lastIndex = at;
    return stop.exec(text)?.index ?? text.length;
  }

  /** A whole CSI with its numbers clamped. */
  private clamped(csi: string): string {
    return csi.replace(/[0-9]+/g, (digits) => String(Math.min(Number(digits), this.bound)));
  }

  /** One character outside the ground state's text. */
  private take(char: string, code: number, parts: string[]): void {
    // Anywhere: ESC starts a sequence, CAN and SUB end one, a C1 control is ESC and its 7-bit form.
    if (code === 0x1b || code === 0x18 || code === 0x1a || (code >= 0x80 && code <= 0x9f)) {
      this.endNumber(parts);
      parts.push(char);
      if (code === 0x1b) this.state = State.Escape;
      else if (code >= 0x80) this.escaped(code - 0x40);
      else this.state = State.Ground;
      return;
    }
    if (this.state === State.Csi) return this.takeCsi(char, code, parts);
    if (this.state === State.String) {
      if (this.osc && code === 0x07) this.state = State.Ground;
      else if (this.kept++ >= KEPT_STRING_CHARS) return;
      parts.push(char);
      return;
    }
    parts.push(char);
    if (isExecuted(code) || code === 0x7f) return;
    if (this.state === State.Escape) this.escaped(code);
    else if (code < 0x20 || code > 0x2f) this.state = State.Ground;
  }

  /** What the character after an ESC begins. */
  private escaped(code: number): void {
    if (code === 0x5b) this.startCsi();
    else if (code === 0x5d) this.startString(true);
    else if (code === 0x50 || code === 0x58 || code === 0x5e || code === 0x5f) this.startString(false);
    else if (code >= 0x20 && code <= 0x2f) this.state = State.EscapeIntermediate;
    else this.state = State.Ground;
  }

  private startCsi(): void {
    this.state = State.Csi;
    this.entry = true;
    this.isPrivate = false;
    this.number = -1;
  }

  private startString(osc: boolean): void {
    this.state = State.String;
    this.osc = osc;
    this.kept = 0;
  }

  private takeCsi(char: string, code: number, parts: string[]): void {
    if (code >= 0x30 && code <= 0x39) {
      this.number = Math.min(Math.max(0, this.number) * 10 + code - 0x30, MAX_PARAMETER);
      this.entry = false;
      return;
    }
    // A control runs where it stands; the number around it goes on.
    if (isExecuted(code) || code === 0x7f) return void parts.push(char);
    this.endNumber(parts);
    parts.push(char);
    if (this.entry && code >= 0x3c && code <= 0x3f) this.isPrivate = true;
    this.entry = false;
    if (code >= 0x40) this.state = State.Ground; // a final, or a character that ends the sequence
  }

  /** Passes on the number being read, clamped unless the CSI is a private one. */
  private endNumber(parts: string[]): void {
    if (this.state !== State.Csi || this.number === -1) return;
    parts.push(String(this.isPrivate ? this.number : Math.min(this.number, this.bound)));
    this.number = -1;
  }
}
