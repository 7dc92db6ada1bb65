// How the CLI shows things to a person: tables, durations, byte counts, exit codes and colour.
import { exitCodeOfSignal, signalNumber, KILL_SIGNALS, type KillSignal } from '../shared/signals.js';
import { constants as osConstants } from 'node:os';
import { escapeControls } from '../shared/control-escape.js';
import { EXIT_TIMEOUT } from './cli-error.js';

/** Milliseconds as a short duration: 850ms, 4.2s, 3m07s, 2h05m, 3d04h. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const pad = (n: number) => String(Math.floor(n)).padStart(2, '0');
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${pad(seconds % 60)}s`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h${pad((seconds % 3600) / 60)}m`;
  return `${Math.floor(seconds / 86_400)}d${pad((seconds % 86_400) / 3600)}h`;
}

/** How long ago an ISO time was, as a duration. */
export function formatAge(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '-';
  return formatDuration(Math.max(0, now - Date.parse(iso)));
}

/** Bytes with binary units: 512B, 1.5K, 230M, 2.0G. */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return '-';
  const units = ['B', 'K', 'M', 'G', 'T'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value}B` : `${value < 10 ? value.toFixed(1) : Math.round(value)}${units[unit]}`;
}

/** SIGTERM's code as a shell reports it (128+15): that of a task that was ended but exited 0 anyway. */
const ENDED_BUT_EXITED_0 = 143;

/**
 * What a shell reports for a finished task: its exit code, 128+N for signal N, else 1. A task that
 * did not end by itself is never a success: one timed out is 124 (as timeout(1) reports it), one
 * killed or interrupted that exited 0 anyway (a trap) is 143, so that `run -- tests && deploy`
 * does not deploy.
 */
export function shellExitCode(task: { state: string; exit_code: number | null; signal: string | null }): number {
  if (task.state === 'timed_out') return EXIT_TIMEOUT;
  const number = task.signal === null ? undefined : (osConstants.signals as Record<string, number>)[task.signal];
  const code = task.exit_code ?? (number === undefined ? 1 : exitCodeOfSignal(number));
  return code === 0 && task.state !== 'done' ? ENDED_BUT_EXITED_0 : code;
}

/** The accepted spelling of a kill signal (TERM, sigterm, 15 → SIGTERM), or null. */
export function parseSignalName(text: string): KillSignal | null {
  const upper = text.toUpperCase();
  const name = upper.startsWith('SIG') ? upper : `SIG${upper}`;
  const byName = KILL_SIGNALS.find((signal) => signal === name);
  return byName ?? KILL_SIGNALS.find((signal) => String(signalNumber(signal)) === text) ?? null;
}

/** The first line of a command, marked with … when more was cut. */
export function firstLine(command: string): string {
  const newline = command.indexOf('\n');
  return newline === -1 ? command : `${command.slice(0, newline)}…`;
}

/** `text` cut to `width` characters, the cut marked with …; unchanged when width is null. */
export function cutToWidth(text: string, width: number | null): string {
  if (width === null || text.length <= width) return text;
  return width <= 1 ? text.slice(0, Math.max(0, width)) : `${text.slice(0, width - 1)}…`;
}

export type Paint = (style: keyof typeof STYLES, text: string) => string;
const STYLES = { bold: '1', dim: '2', red: '31', green: '32', yellow: '33', blue: '34', cyan: '36' } as const;

/** A painter that colours only when `enabled` (a terminal, and no NO_COLOR). */
export function createPaint(enabled: boolean): Paint {
  return (style, text) => (enabled && text.length > 0 ? `\x1b[${STYLES[style]}m${text}\x1b[0m` : text);
}

/** The colour a state is shown in. */
export function stateStyle(state: string, exitCode: number | null): keyof typeof STYLES {
  if (state === 'running') return 'cyan';
  if (state === 'pending') return 'blue';
  if (state === 'done' && exitCode === 0) return 'green';
  if (state === 'done') return 'red';
  return 'yellow';
}

export interface Column {
  header: string;
  align?: 'left' | 'right';
}

/**
 * The rows under their headers, columns padded to their widest cell; the last column is cut so each
 * line fits in `width` (when given). `paint(row, column, padded)` may colour a cell after padding.
 * A cell's control and invisible characters are shown escaped: a cell is a task's or a client's text.
 */
export function renderTable(
  columns: Column[],
  givenRows: string[][],
  width: number | null,
  paint?: (row: number, column: number, text: string) => string,
): string {
  const rows = givenRows.map((row) => row.map((cell) => escapeControls(cell)));
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...rows.map((row) => row[index]!.length)),
  );
  const last = columns.length - 1;
  const fixed = widths.slice(0, last).reduce((sum, w) => sum + w + 2, 0);
  const lastWidth = width === null ? null : Math.max(10, width - fixed);
  const line = (cells: string[], rowIndex: number) =>
    cells
      .map((cell, index) => {
        const text =
          index === last
            ? cutToWidth(cell, lastWidth)
            : columns[index]!.align === 'right'
              ? cell.padStart(widths[index]!)
              : cell.padEnd(widths[index]!);
        return rowIndex >= 0 && paint ? paint(rowIndex, index, text) : text;
      })
      .join('  ')
      .trimEnd();
  return [
    line(
      columns.map((column) => column.header),
      -1,
    ),
    ...rows.map((row, index) => line(row, index)),
  ].join('\n');
}
