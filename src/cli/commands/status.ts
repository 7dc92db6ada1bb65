// status: everything the daemon knows of one task, a field a line, the output's tails last.
import { parseCount, requireIds } from '../arguments.js';
import { writeJson, type Command } from '../command.js';
import { formatBytes, formatDuration, stateStyle } from '../format.js';
import { escapeControls } from '../../shared/control-escape.js';
import { describeSandbox } from '../../shared/sandbox.js';
import { MAX_TAIL_BYTES } from '../../shared/tool-bounds.js';
import { fetchStatus, type TaskStatus } from '../tasks.js';

/** The fields a person reads first, as label and value. */
function describeFields(task: TaskStatus): Array<[string, string]> {
  const stream = (name: 'stdout' | 'stderr') =>
    `${task[`${name}_path`]} (${formatBytes(task[`${name}_bytes`])}${task[`${name}_truncated`] ? ', truncated at the cap' : ''})`;
  const exit = task.exit_code === null ? '-' : `${task.exit_code}${task.signal ? ` (${task.signal})` : ''}`;
  const fields: Array<[string, string | null]> = [
    ['id', task.id],
    ['name', task.name],
    ['state', task.state],
    ['exit', exit],
    ['error', task.error],
    ['command', task.command],
    ['started', task.started_at],
    ['ended', task.ended_at],
    ['runtime', formatDuration(task.runtime_ms)],
    [
      'pid',
      task.pid === null
        ? null
        : `${task.pid} (group ${task.pgid})${task.namespace_pid === null ? '' : `; ${task.namespace_pid} as tasks see it`}`,
    ],
    [
      'terminal',
      task.pty ? `pty${task.interactive ? ', interactive' : ''}` : task.interactive ? 'pipes, interactive' : null,
    ],
    ['stdin', task.interactive ? (task.stdin_open ? 'open' : 'closed') : null],
    ['sandbox', task.sandbox === null ? null : describeSandbox(task.sandbox)],
    ['cpu', task.cpu_ms === null ? null : formatDuration(task.cpu_ms)],
    ['memory', task.memory_bytes === null ? null : formatBytes(task.memory_bytes)],
    [
      'memory peak',
      task.memory_peak_bytes === null || task.memory_peak_bytes === undefined
        ? null
        : formatBytes(task.memory_peak_bytes),
    ],
    ['processes', task.processes === null ? null : String(task.processes)],
    [
      'lingering',
      task.lingering > 0
        ? `${task.lingering} process(es) alive after the leader exited (hive-bash kill ends them)`
        : null,
    ],
    ['stdout', stream('stdout')],
    ['stderr', stream('stderr')],
  ];
  return fields.filter((field): field is [string, string] => field[1] !== null);
}

/** The tail of one stream under a rule naming it, or nothing when it is empty; its controls shown escaped (logs shows them as written). */
function describeTail(name: string, tail: string, totalBytes: number): string {
  if (tail.length === 0) return '';
  const shown =
    Buffer.byteLength(tail) < totalBytes
      ? `last ${formatBytes(Buffer.byteLength(tail))} of ${formatBytes(totalBytes)}`
      : 'all of it';
  return `\n--- ${name} (${shown}) ---\n${escapeControls(tail, true)}${tail.endsWith('\n') ? '' : '\n'}`;
}

export const statusCommand: Command = {
  name: 'status',
  summary: "everything the daemon knows of one task, the output's tails last",
  usage: 'hive-bash status ID [--tail BYTES]',
  help: [`--tail BYTES    how much of the end of each stream to show, 0 to ${MAX_TAIL_BYTES} (default 4096)`],
  options: { tail: { type: 'string' } },
  async run(context, values, positionals) {
    const [id] = requireIds('status', positionals, true);
    const task = await fetchStatus(
      context.client,
      id!,
      parseCount('--tail', values.tail as string | undefined, MAX_TAIL_BYTES, true),
    );
    if (context.json) {
      writeJson(context, task);
      return 0;
    }
    const fields = describeFields(task);
    const width = Math.max(...fields.map(([label]) => label.length));
    const lines = fields.map(([label, value]) => {
      // A value's controls are shown escaped, the lines of a script indented under its first: no
      // line of a value can pass for a field of its own.
      const text = escapeControls(value, true).replace(/\n/g, `\n${' '.repeat(width + 2)}`);
      const shown = label === 'state' ? context.paint(stateStyle(task.state, task.exit_code), text) : text;
      return `${context.paint('bold', label.padEnd(width))}  ${shown}`;
    });
    context.write(
      `${lines.join('\n')}\n${describeTail('stdout', task.stdout_tail, task.stdout_bytes)}${describeTail('stderr', task.stderr_tail, task.stderr_bytes)}`,
    );
    return 0;
  },
};
