// The daemon's Prometheus metrics, served at GET /metrics by prom-client: what ran, how it ended and
// how long each step took, beside prom-client's default metrics of the process and of Node. Base
// units, `_total` counters, a `hive_bash_` prefix, no task id as a label. The series are a contract
// (test/supervisor/metrics-contract.test.ts lists them): dashboards, deploy/prometheus's rules and
// the bench read them by name.
import { statfsSync, type StatsFs } from 'node:fs';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LifecycleEffects, LifecycleEvent } from './model/lifecycle.js';
import { FINISHED_STATES, TASK_STATES, type TaskState } from '../shared/task-states.js';
import type { SteppedTask } from './tasks/task-events.js';
import { countOwnChildren } from '../process/process-table.js';

const PREFIX = 'hive_bash_';
/** How often the event loop's delay is sampled, in ms: at prom-client's default of 10 ms an idle daemon's main thread wakes 100 times a second. */
const EVENT_LOOP_RESOLUTION_MS = 100;
/** prom-client's default gauges named `_total`, left out: they break the naming rules (`promtool check metrics`), and sum() over the `type` label of the same gauge without `_total` gives their figure. */
const TOTAL_GAUGES = ['nodejs_active_resources_total', 'nodejs_active_handles_total', 'nodejs_active_requests_total'];
/** From a few milliseconds (an echo) to an hour (a build or test suite). */
const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** The MCP methods a client can send that get a label of their own; anything else is "other". */
const MCP_METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'notifications/initialized',
  'notifications/cancelled',
  'server/discover',
  'tasks/get',
  'tasks/cancel',
]);

export interface MetricsSources {
  version: string;
  containment: string;
  stateDir: string;
  /** Tasks this start found pending or running in the registry, and marked interrupted. */
  interruptedAtStart: number;
  tasks: {
    countByState(): Record<TaskState, number>;
    /** How long the oldest running task has run and the oldest pending one has waited, in ms (0: none). */
    oldestAgesMs(): { running: number; pending: number };
  };
  outboxDepth(): number;
  /** The harness socket's connection; null without --agent-socket, where todos wait in the outbox by design. */
  harness: { readonly connected: boolean } | null;
  /** False while registry writes are refused and held in memory (a full disk, say). */
  stateDirWritable(): boolean;
}

/** The metrics that move as tasks run and requests are answered. */
type TaskMetrics = ReturnType<typeof registerTaskMetrics>;

export class DaemonMetrics {
  readonly registry = new Registry();
  private readonly task: TaskMetrics;

  constructor(sources: MetricsSources) {
    collectDefaultMetrics({
      register: this.registry,
      prefix: PREFIX,
      eventLoopMonitoringPrecision: EVENT_LOOP_RESOLUTION_MS,
    });
    for (const name of TOTAL_GAUGES) this.registry.removeSingleMetric(PREFIX + name);
    this.task = registerTaskMetrics(this.registry);
    registerStateGauges(this.registry, sources);
  }

  /** Counts a task's lifecycle event (the TaskService's transition listener). */
  observeTransition(task: SteppedTask, event: LifecycleEvent, effects: LifecycleEffects): void {
    const { record } = task;
    const metrics = this.task;
    if (event.type === 'started') {
      metrics.started.inc({ kind: record.pty ? 'pty' : 'pipe' });
      metrics.spawnLatency.observe(Math.max(0, event.startedAt - record.createdAt) / 1000);
    } else if (event.type === 'truncated') {
      metrics.truncated.inc({ stream: event.stream });
    } else if (event.type === 'released') {
      metrics.outputBytes.inc({ stream: 'stdout' }, event.stdoutBytes);
      metrics.outputBytes.inc({ stream: 'stderr' }, event.stderrBytes);
      if (task.killedAt !== null) metrics.killDuration.observe(Math.max(0, Date.now() - task.killedAt) / 1000);
    }
    if (effects.finished) {
      metrics.finished.inc({ state: record.state });
      if (record.oomKilled) metrics.oomKilled.inc();
      if (record.startedAt !== null && record.endedAt !== null)
        metrics.taskDuration.observe(Math.max(0, record.endedAt - record.startedAt) / 1000);
    }
  }

  /** Times one MCP HTTP request; `body` is its parsed JSON (a message or a batch). */
  timeMcpRequest(body: unknown): () => void {
    const end = this.task.mcpDuration.startTimer();
    return () => void end({ method: mcpMethodOf(body) });
  }
}

function counter<T extends string = never>(registry: Registry, name: string, help: string, labelNames: T[] = []) {
  return new Counter<T>({ name: PREFIX + name, help, labelNames, registers: [registry] });
}

function histogram<T extends string = never>(
  registry: Registry,
  name: string,
  help: string,
  buckets: number[],
  labelNames: T[] = [],
) {
  return new Histogram<T>({ name: PREFIX + name, help, buckets, labelNames, registers: [registry] });
}

/** A gauge; `read`, when given, sets its values at each scrape. */
function gauge<T extends string = never>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: T[] = [],
  read?: (gauge: Gauge<T>) => void,
) {
  return new Gauge<T>({
    name: PREFIX + name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      read?.(this);
    },
  });
}

function registerTaskMetrics(registry: Registry) {
  const metrics = {
    started: counter(registry, 'tasks_started_total', 'Tasks whose leader started, by kind (pipe or pty)', ['kind']),
    finished: counter(registry, 'tasks_finished_total', 'Tasks that reached a final state, by that state', ['state']),
    oomKilled: counter(registry, 'tasks_oom_killed_total', "Tasks the kernel's OOM killer ended at their memory limit"),
    taskDuration: histogram(
      registry,
      'task_duration_seconds',
      'From the start of a task to its end',
      DURATION_BUCKETS_S,
    ),
    spawnLatency: histogram(
      registry,
      'spawn_latency_seconds',
      'From the run request to the leader running (queueing included)',
      LATENCY_BUCKETS_S,
    ),
    killDuration: histogram(
      registry,
      'kill_duration_seconds',
      'From a kill to nothing of the task left',
      LATENCY_BUCKETS_S,
    ),
    outputBytes: counter(
      registry,
      'output_bytes_total',
      'Bytes tasks wrote to their output streams (kept or past the cap)',
      ['stream'],
    ),
    truncated: counter(registry, 'output_truncated_total', 'Output streams cut at the cap (or by a failed write)', [
      'stream',
    ]),
    mcpDuration: histogram(
      registry,
      'mcp_request_duration_seconds',
      'MCP HTTP requests, by JSON-RPC method',
      LATENCY_BUCKETS_S,
      ['method'],
    ),
  };
  // Every known label value from zero, so a rate is right from the first scrape.
  for (const kind of ['pipe', 'pty']) metrics.started.inc({ kind }, 0);
  for (const state of FINISHED_STATES) metrics.finished.inc({ state }, 0);
  for (const stream of ['stdout', 'stderr']) {
    metrics.outputBytes.inc({ stream }, 0);
    metrics.truncated.inc({ stream }, 0);
  }
  return metrics;
}

/** The gauges of the daemon's state: read at each scrape from `sources`, or set once here. */
function registerStateGauges(registry: Registry, sources: MetricsSources): void {
  gauge(registry, 'tasks', 'Tasks now in each state', ['state'], (tasks) => {
    const counts = sources.tasks.countByState();
    for (const state of TASK_STATES) tasks.set({ state }, counts[state]);
  });
  const oldestHelp = 'The oldest running task since its start, the oldest pending one since its run; 0: none';
  gauge(registry, 'oldest_task_age_seconds', oldestHelp, ['state'], (oldest) => {
    const ages = sources.tasks.oldestAgesMs();
    oldest.set({ state: 'running' }, ages.running / 1000);
    oldest.set({ state: 'pending' }, ages.pending / 1000);
  });
  gauge(
    registry,
    'tasks_interrupted_at_start',
    'Tasks this start of the daemon found unfinished and marked interrupted',
  ).set(sources.interruptedAtStart);
  const { stateDir } = sources;
  gauge(registry, 'state_dir_available_bytes', "Bytes free to the daemon on the state dir's file system", [], (free) =>
    free.set(fileSystemBytes(stateDir, (stats) => stats.bavail * stats.bsize)),
  );
  gauge(registry, 'state_dir_size_bytes', "The size of the state dir's file system", [], (size) =>
    size.set(fileSystemBytes(stateDir, (stats) => stats.blocks * stats.bsize)),
  );
  const writableHelp =
    "1 while the state dir takes writes; 0 while the registry's are held in memory, or no inode is left for output files";
  gauge(registry, 'state_dir_writable', writableHelp, [], (writable) =>
    writable.set(sources.stateDirWritable() ? 1 : 0),
  );
  gauge(registry, 'outbox_depth', 'Todo operations not yet acknowledged by the harness', [], (depth) =>
    depth.set(sources.outboxDepth()),
  );
  gauge(registry, 'harness_connected', '1 while the todo socket is connected', [], (connected) =>
    connected.set(sources.harness?.connected === true ? 1 : 0),
  );
  gauge(registry, 'harness_configured', '1 when a todo socket is configured (--agent-socket)').set(
    sources.harness === null ? 0 : 1,
  );
  const childrenHelp = "The daemon's own child processes (spawners, the tasks' init), live or zombie";
  gauge(registry, 'child_processes', childrenHelp, ['state'], (children) => {
    const own = countOwnChildren();
    children.set({ state: 'live' }, own.processes - own.zombies);
    children.set({ state: 'zombie' }, own.zombies);
  });
  const build = gauge(registry, 'build_info', 'The daemon build, as labels; always 1', [
    'version',
    'node_version',
    'containment',
  ]);
  build.set({ version: sources.version, node_version: process.version, containment: sources.containment }, 1);
}

function mcpMethodOf(body: unknown): string {
  if (Array.isArray(body)) return 'batch';
  const method = (body as { method?: unknown } | null)?.method;
  return typeof method === 'string' && MCP_METHODS.has(method) ? method : 'other';
}

/** Bytes of the file system holding `dir`, as `pick` reads them from its statfs; NaN when it cannot be read. */
function fileSystemBytes(dir: string, pick: (stats: StatsFs) => number): number {
  try {
    return pick(statfsSync(dir));
  } catch {
    return NaN;
  }
}
