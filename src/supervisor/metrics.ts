// The daemon's Prometheus metrics (prom-client), served at GET /metrics: what ran, how it ended and
// how long each step took. Base units, `_total` counters, a `hive_bash_` prefix, no task id as a label.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { LifecycleEffects, LifecycleEvent } from './model/lifecycle.js';
import { FINISHED_STATES, TASK_STATES, type TaskState } from './model/task.js';
import type { SteppedTask } from './tasks/task-events.js';
import { heapReductions } from './quiet-heap.js';

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
  countByState(): Record<TaskState, number>;
  outboxDepth(): number;
  harnessConnected(): boolean;
}

export class DaemonMetrics {
  readonly registry = new Registry();
  private readonly started;
  private readonly finished;
  private readonly taskDuration;
  private readonly spawnLatency;
  private readonly killDuration;
  private readonly outputBytes;
  private readonly truncated;
  private readonly mcpDuration;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    // prom-client samples the event loop's delay every 10 ms by default: a timer that kept an idle
    // daemon's main thread waking 100 times a second (190 ms of CPU in 20 idle seconds, measured;
    // 20 ms at 100 ms). A stall of 100 ms or more is still always seen.
    collectDefaultMetrics({ register: this.registry, prefix: PREFIX, eventLoopMonitoringPrecision: 100 });
    this.started = new Counter({
      name: `${PREFIX}tasks_started_total`,
      help: 'Tasks whose leader started, by kind (pipe or pty)',
      labelNames: ['kind'],
      registers,
    });
    this.finished = new Counter({
      name: `${PREFIX}tasks_finished_total`,
      help: 'Tasks that reached a final state, by that state',
      labelNames: ['state'],
      registers,
    });
    this.taskDuration = new Histogram({
      name: `${PREFIX}task_duration_seconds`,
      help: 'From the start of a task to its end',
      buckets: DURATION_BUCKETS_S,
      registers,
    });
    this.spawnLatency = new Histogram({
      name: `${PREFIX}spawn_latency_seconds`,
      help: 'From the run request to the leader running (queueing included)',
      buckets: LATENCY_BUCKETS_S,
      registers,
    });
    this.killDuration = new Histogram({
      name: `${PREFIX}kill_duration_seconds`,
      help: 'From a kill to nothing of the task left',
      buckets: LATENCY_BUCKETS_S,
      registers,
    });
    this.outputBytes = new Counter({
      name: `${PREFIX}output_bytes_total`,
      help: 'Bytes tasks wrote to their output streams (kept or past the cap)',
      labelNames: ['stream'],
      registers,
    });
    this.truncated = new Counter({
      name: `${PREFIX}output_truncated_total`,
      help: 'Output streams cut at the cap (or by a failed write)',
      labelNames: ['stream'],
      registers,
    });
    this.mcpDuration = new Histogram({
      name: `${PREFIX}mcp_request_duration_seconds`,
      help: 'MCP HTTP requests, by JSON-RPC method',
      labelNames: ['method'],
      buckets: LATENCY_BUCKETS_S,
      registers,
    });
    // Every known label value from zero, so a rate is right from the first scrape.
    for (const kind of ['pipe', 'pty']) this.started.inc({ kind }, 0);
    for (const state of FINISHED_STATES) this.finished.inc({ state }, 0);
    for (const stream of ['stdout', 'stderr']) {
      this.outputBytes.inc({ stream }, 0);
      this.truncated.inc({ stream }, 0);
    }
    new Gauge({
      name: `${PREFIX}tasks`,
      help: 'Tasks now in each state',
      labelNames: ['state'],
      registers,
      collect() {
        const counts = sources.countByState();
        for (const state of TASK_STATES) this.set({ state }, counts[state]);
      },
    });
    new Gauge({
      name: `${PREFIX}outbox_depth`,
      help: 'Todo operations not yet acknowledged by the harness',
      registers,
      collect() {
        this.set(sources.outboxDepth());
      },
    });
    new Gauge({
      name: `${PREFIX}harness_connected`,
      help: '1 while the todo socket is connected',
      registers,
      collect() {
        this.set(sources.harnessConnected() ? 1 : 0);
      },
    });
    new Counter({
      name: `${PREFIX}heap_reductions_total`,
      help: 'Times the main thread, quiet for ten seconds, had V8 reduce its heap',
      registers,
      collect() {
        this.reset();
        this.inc(heapReductions());
      },
    });
    const build = new Gauge({
      name: `${PREFIX}build_info`,
      help: 'The daemon build, as labels; always 1',
      labelNames: ['version', 'node_version', 'containment'],
      registers,
    });
    build.set({ version: sources.version, node_version: process.version, containment: sources.containment }, 1);
  }

  /** Counts a task's lifecycle event (the TaskService's transition listener). */
  observeTransition(task: SteppedTask, event: LifecycleEvent, effects: LifecycleEffects): void {
    const { record } = task;
    if (event.type === 'started') {
      this.started.inc({ kind: record.pty ? 'pty' : 'pipe' });
      this.spawnLatency.observe(Math.max(0, event.startedAt - record.createdAt) / 1000);
    } else if (event.type === 'truncated') {
      this.truncated.inc({ stream: event.stream });
    } else if (event.type === 'released') {
      this.outputBytes.inc({ stream: 'stdout' }, event.stdoutBytes);
      this.outputBytes.inc({ stream: 'stderr' }, event.stderrBytes);
      if (task.killedAt !== null) this.killDuration.observe(Math.max(0, Date.now() - task.killedAt) / 1000);
    }
    if (effects.finished) {
      this.finished.inc({ state: record.state });
      if (record.startedAt !== null && record.endedAt !== null)
        this.taskDuration.observe(Math.max(0, record.endedAt - record.startedAt) / 1000);
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
