// todos: the daemon's outbox of todos for the harness, and whether the harness is connected.
import { escapeControls } from '../../shared/control-escape.js';
import { writeJson, type Command } from '../command.js';
import { formatAge, renderTable, type Column } from '../format.js';

interface OutboxEntry {
  key: string;
  version: number;
  queued_at: string;
  request: {
    cmd: string;
    source: string;
    key: string;
    state?: string;
    summary?: string;
    body?: string;
    updated_at?: number;
  };
}

interface TodosReport {
  socket: string | null;
  harness_connected: boolean;
  outbox_depth: number;
  /** Absent when the daemon has no /todos and only /healthz told. */
  outbox?: OutboxEntry[];
}

const COLUMNS: Column[] = [
  { header: 'KEY' },
  { header: 'VERSION', align: 'right' },
  { header: 'QUEUED', align: 'right' },
  { header: 'CMD' },
  { header: 'STATE' },
  { header: 'SUMMARY' },
];

/** /todos, or on a daemon without it the socket and depth that /healthz has. */
async function fetchTodos(context: Parameters<Command['run']>[0]): Promise<TodosReport> {
  const report = await context.client.getJson<TodosReport>('/todos', true);
  if (report !== null) return report;
  const health = await context.client.getJson<{ todos: TodosReport }>('/healthz');
  return health.todos;
}

export const todosCommand: Command = {
  name: 'todos',
  summary: "the todos waiting in the daemon's outbox, and whether the harness is connected",
  usage: 'hive-bash todos',
  help: [
    'Shows the harness socket (--agent-socket), whether the daemon is connected to it, and each todo',
    'operation (upsert or clear) not yet acknowledged by the harness, oldest first. Without a socket',
    'they wait here until one is configured.',
  ],
  options: {},
  async run(context) {
    const report = await fetchTodos(context);
    if (context.json) {
      writeJson(context, report);
      return 0;
    }
    const connection =
      report.socket === null
        ? 'none configured (--agent-socket)'
        : `${escapeControls(report.socket)} (${report.harness_connected ? context.paint('green', 'connected') : context.paint('red', 'not connected')})`;
    const lines = [`harness socket: ${connection}`, `outbox: ${report.outbox_depth} waiting`];
    if (report.outbox === undefined) {
      lines.push("(this daemon has no /todos, so the entries cannot be shown; only /healthz's counts)");
    } else if (report.outbox.length > 0) {
      const now = Date.now();
      const rows = report.outbox.map((entry) => [
        entry.key,
        String(entry.version),
        formatAge(entry.queued_at, now),
        entry.request.cmd,
        entry.request.state ?? '',
        entry.request.summary ?? '',
      ]);
      lines.push('', renderTable(COLUMNS, rows, context.width));
      if (rows.length < report.outbox_depth) lines.push(`(the oldest ${rows.length} shown)`);
    }
    context.write(`${lines.join('\n')}\n`);
    return 0;
  },
};
