// The daemon's Prometheus metrics, served at GET /metrics: what ran, how it ended and how long each
// step took, beside the process's own (./runtime-metrics.ts). Base units, `_total` counters, a
// `hive_bash_` prefix, no task id as a label.
import type { LifecycleEffects, LifecycleEvent } from './model/lifecycle.js';
import { FINISHED_STATES, TASK_STATES, type TaskState } from '../shared/task-states.js';
import type { SteppedTask } from './tasks/task-events.js';
import { Counter, Gauge, Histogram, namedIn, Registry } from './prometheus.js';
import { registerRuntimeMetrics } from './runtime-metrics.js';
import { countOwnChildren } from '../process/process-table.js';
import { statfsSync } from 'node:fs';

const PREFIX = 'hive_bash_';
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

export class DaemonMetrics {
  readonly registry = new Registry();
  private readonly started: Counter;
  private readonly finished: Counter;
  private readonly oomKilled: Counter;
  private readonly taskDuration: Histogram;
  private readonly spawnLatency: Histogram;
  private readonly killDuration: Histogram;
  private readonly outputBytes: Counter;
  private readonly truncated: Counter;
  private readonly mcpDuration: Histogram;

  constructor(sources: MetricsSources) {
    const registry = this.registry;
    const named = namedIn(registry, PREFIX);
    registerRuntimeMetrics(registry, PREFIX);
    this.started = new Counter(named('tasks_started_total', 'Tasks whose leader started, by kind (pipe or pty)', true));
    this.finished = new Counter(named('tasks_finished_total', 'Tasks that reached a final state, by that state', true));
    this.oomKilled = new Counter(
      named('tasks_oom_killed_total', "Tasks the kernel's OOM killer ended at their memory limit"),
    );
    this.taskDuration = new Histogram({
      ...named('task_duration_seconds', 'From the start of a task to its end'),
      buckets: DURATION_BUCKETS_S,
    });
    this.spawnLatency = new Histogram({
      ...named('spawn_latency_seconds', 'From the run request to the leader running (queueing included)'),
      buckets: LATENCY_BUCKETS_S,
    });
    this.killDuration = new Histogram({
      ...named('kill_duration_seconds', 'From a kill to nothing of the task left'),
      buckets: LATENCY_BUCKETS_S,
    });
    this.outputBytes = new Counter(
      named('output_bytes_total', 'Bytes tasks wrote to their output streams (kept or past the cap)', true),
    );
    this.truncated = new Counter(
      named('output_truncated_total', 'Output streams cut at the cap (or by a failed write)', true),
    );
    this.mcpDuration = new Histogram({
      ...named('mcp_request_duration_seconds', 'MCP HTTP requests, by JSON-RPC method', true),
      buckets: LATENCY_BUCKETS_S,
    });
    // Every known label value from zero, so a rate is right from the first scrape.
    for (const kind of ['pipe', 'pty']) this.started.inc({ kind }, 0);
    for (const state of FINISHED_STATES) this.finished.inc({ state }, 0);
    for (const stream of ['stdout', 'stderr']) {
      this.outputBytes.inc({ stream }, 0);
      this.truncated.inc({ stream }, 0);
    }
    const tasks = new Gauge(named('tasks', 'Tasks now in each state', true));
    const oldest = new Gauge(
      named(
        'oldest_task_age_seconds',
        'The oldest running task since its start, the oldest pending one since its run; 0: none',
        true,
      ),
    );
    const interrupted = new Gauge(
      named('tasks_interrupted_at_start', 'Tasks this start of the daemon found unfinished and marked interrupted'),
    );
    interrupted.set({}, sources.interruptedAtStart);
    const stateDirAvailable = new Gauge(
      named('state_dir_available_bytes', "Bytes free to the daemon on the state dir's file system"),
    );
    const stateDirSize = new Gauge(named('state_dir_size_bytes', "The size of the state dir's file system"));
    const stateDirWritable = new Gauge(
      named('state_dir_writable', '1 while the registry takes writes; 0 while they are held in memory'),
    );
    const outboxDepth = new Gauge(named('outbox_depth', 'Todo operations not yet acknowledged by the harness'));
    const harnessConnected = new Gauge(named('harness_connected', '1 while the todo socket is connected'));
    const harnessConfigured = new Gauge(
      named('harness_configured', '1 when a todo socket is configured (--agent-socket)'),
    );
    harnessConfigured.set({}, sources.harness === null ? 0 : 1);
    const children = new Gauge(
      named('child_processes', "The daemon's own child processes (spawners, the tasks' init), live or zombie", true),
    );
    const build = new Gauge(named('build_info', 'The daemon build, as labels; always 1', true));
    build.set({ version: sources.version, node_version: process.version, containment: sources.containment }, 1);
    registry.onScrape(() => {
      const counts = sources.tasks.countByState();
      for (const state of TASK_STATES) tasks.set({ state }, counts[state]);
      const ages = sources.tasks.oldestAgesMs();
      oldest.set({ state: 'running' }, ages.running / 1000);
      oldest.set({ state: 'pending' }, ages.pending / 1000);
      readFileSystem(sources.stateDir, stateDirAvailable, stateDirSize);
      stateDirWritable.set({}, sources.stateDirWritable() ? 1 : 0);
      outboxDepth.set({}, sources.outboxDepth());
      harnessConnected.set({}, sources.harness?.connected === true ? 1 : 0);
      const own = countOwnChildren();
      children.set({ state: 'live' }, own.processes - own.zombies);
      children.set({ state: 'zombie' }, own.zombies);
    });
  }

  /** Counts a task's lifecycle event (the TaskService's transition listener). */
  observeTransition(task: SteppedTask, event: LifecycleEvent, effects: LifecycleEffects): void {
    const { record } = task;
    if (event.type === 'started') {
      this.started.inc({ kind: record.pty ? 'pty' : 'pipe' });
      this.spawnLatency.observe({}, Math.max(0, event.startedAt - record.createdAt) / 1000);
    } else if (event.type === 'truncated') {
      this.truncated.inc({ stream: event.stream });
    } else if (event.type === 'released') {
      this.outputBytes.inc({ stream: 'stdout' }, event.stdoutBytes);
      this.outputBytes.inc({ stream: 'stderr' }, event.stderrBytes);
      if (task.killedAt !== null) this.killDuration.observe({}, Math.max(0, Date.now() - task.killedAt) / 1000);
    }
    if (effects.finished) {
      this.finished.inc({ state: record.state });
      if (record.oomKilled) this.oomKilled.inc();
      if (record.startedAt !== null && record.endedAt !== null)
        this.taskDuration.observe({}, Math.max(0, record.endedAt - record.startedAt) / 1000);
    }
  }

  /** Times one MCP HTTP request; `body` is its parsed JSON (a message or a batch). */
  timeMcpRequest(body: unknown): () => void {
    const end = this.mcpDuration.startTimer();
    return () => end({ method: mcpMethodOf(body) });
  }
}

function mcpMethodOf(body: unknown): string {
  if (Array.isArray(body)) return 'batch';
  const method = (body as { method?: unknown } | null)?.method;
  return typeof method === 'string' && MCP_METHODS.has(method) ? method : 'other';
}

/** The free and whole bytes of the file system holding `dir`; NaN when it cannot be read. */
function readFileSystem(dir: string, available: Gauge, size: Gauge): void {
  try {
    const stats = statfsSync(dir);
    available.set({}, stats.bavail * stats.bsize);
    size.set({}, stats.blocks * stats.bsize);
  } catch {
    available.set({}, NaN);
    size.set({}, NaN);
  }
}
