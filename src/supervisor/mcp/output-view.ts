// output's answer: its schema (what an agent reads about each field) and the short text beside the
// structured content.
import { z } from 'zod';
import { TASK_STATES } from '../../shared/task-states.js';
import type { StreamMember } from '../output/output-read.js';
import type { Screen } from '../output/terminal-screen.js';
import { SCREEN_WORK_MS_PER_MINUTE } from '../output/screen-work.js';

const memberSchema = z
  .object({
    text: z
      .string()
      .describe(
        'The lines read (a pty task\'s as clean text unless raw), each line once; with grep, "N:line" for a match, "N-line" for context and "--" between groups; where max_bytes cut, "[... N lines (B bytes) left out ...]" between the beginning and the end',
      ),
    first_line: z
      .number()
      .int()
      .nullable()
      .describe("The number of the first line in text (1 is the stream's first line); null when text is empty"),
    last_line: z.number().int().nullable().describe('The number of the last line in text; null when text is empty'),
    omitted_lines: z
      .number()
      .int()
      .describe('Selected lines left out of text to keep within max_bytes (or between head and tail)'),
    omitted_bytes: z
      .number()
      .int()
      .describe('Bytes of the file left out of text (with grep, of the lines selected, without their numbers)'),
    bytes: z.number().int().describe('Bytes of the stream in its file now'),
    truncated: z.boolean().describe('The stream passed the output cap: what it wrote after that was discarded'),
    matches: z.number().int().optional().describe('With grep: the lines that matched in what was read'),
  })
  .describe('One stream of the task');

const screenSchema = z.object({
  text: z.string().describe('What the terminal shows now: one line per row, trailing spaces trimmed'),
  cursor: z
    .object({ row: z.number().int(), col: z.number().int() })
    .describe('Where the cursor is, from 0,0 at the top left'),
  rows: z.number().int(),
  cols: z.number().int(),
  alternate_screen: z.boolean().describe('A full-screen program (vim, less, top) is using the alternate screen'),
  skipped_bytes: z
    .number()
    .int()
    .optional()
    .describe(
      `Bytes of the output never drawn on this screen: drawing all of it would have taken the task past ${SCREEN_WORK_MS_PER_MINUTE / 1000} s of screen work a minute, so a recent part was drawn instead (absent when nothing was skipped)`,
    ),
});

export const outputSchema = z.object({
  id: z.string().describe('The task id'),
  state: z.enum(TASK_STATES).describe('The state of the task now'),
  pty: z.boolean().describe('It runs on a terminal: all its output is in stdout'),
  complete: z
    .boolean()
    .describe(
      'The task has ended and all it wrote is in: once an answer with since brings nothing new, there is nothing more to read',
    ),
  stdout: memberSchema.optional(),
  stderr: memberSchema.optional(),
  next: z
    .string()
    .describe(
      'Pass it back as since to read only what comes after this answer (both streams); covers what the answer covered (with head: up to its last line)',
    ),
  restarted: z
    .boolean()
    .describe(
      'The since given was of an earlier run of this id (its name was reused) or past its output: this answer reads from the start of the current run',
    ),
  omitted_lines: z.number().int().describe('Lines left out, over both streams'),
  omitted_bytes: z.number().int().describe('Bytes left out, over both streams'),
  screen: screenSchema.optional().describe('With screen: true, what the terminal shows now'),
});

export type OutputView = z.output<typeof outputSchema>;

/** The structured answer from what was read. */
export function viewOf(
  base: Pick<OutputView, 'id' | 'state' | 'pty' | 'complete' | 'next' | 'restarted'>,
  members: Partial<Record<'stdout' | 'stderr', StreamMember>>,
  screen: Screen | null,
): OutputView {
  const all = Object.values(members);
  return {
    ...base,
    ...members,
    omitted_lines: all.reduce((sum, member) => sum + member.omitted_lines, 0),
    omitted_bytes: all.reduce((sum, member) => sum + member.omitted_bytes, 0),
    ...(screen === null ? {} : { screen }),
  };
}

/** The text of an answer: a line on the task, each stream under a header, the screen, and next. */
export function describeOutput(view: OutputView): string {
  const parts = [
    `task ${view.id} ${view.state}${view.pty ? ' (pty)' : ''}${view.restarted ? '; read from the start of its current run (since was of another run, or past its output)' : ''}`,
  ];
  for (const stream of ['stdout', 'stderr'] as const) {
    const member = view[stream];
    if (member === undefined) continue;
    const lines =
      member.first_line === null
        ? 'nothing new'
        : member.first_line === member.last_line
          ? `line ${member.first_line}`
          : `lines ${member.first_line}-${member.last_line}`;
    const matched = member.matches === undefined ? '' : `, ${member.matches} matching`;
    const cut =
      member.omitted_lines > 0 || member.omitted_bytes > 0
        ? `, ${member.omitted_lines} lines (${member.omitted_bytes} bytes) left out`
        : '';
    parts.push(`--- ${stream}: ${lines}${matched}${cut}${member.truncated ? ', truncated at the cap' : ''} ---`);
    if (member.text.length > 0) parts.push(member.text.replace(/\n$/, ''));
  }
  if (view.screen !== undefined) {
    const { screen } = view;
    parts.push(
      `--- screen ${screen.cols}x${screen.rows}, cursor at row ${screen.cursor.row} col ${screen.cursor.col}${screen.alternate_screen ? ', alternate screen' : ''}${screen.skipped_bytes === undefined ? '' : `, ${screen.skipped_bytes} bytes of output skipped`} ---`,
      screen.text,
    );
  }
  parts.push(`next: ${view.next}`);
  return parts.join('\n');
}
