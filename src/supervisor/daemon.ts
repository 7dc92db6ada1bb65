// Wires the daemon together: registry, workers, tasks, MCP and HTTP; and takes it apart on stop.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { VERSION } from '../shared/tool-bounds.js';
import { createRequestGuard } from './http/guard.js';
import { createHttpServer } from './http/server.js';
import { createToolRegistry } from './mcp/tool-registry.js';
import { SessionManager } from './mcp/sessions.js';
import { StatelessEndpoint } from './mcp/stateless-endpoint.js';
import { McpTasks } from './mcp/mcp-tasks.js';
import { TOOLS } from './mcp/tools/index.js';
import { TaskStore } from './registry/task-store.js';
import { lockStateDir } from './state-lock.js';
import {
  chooseContainment,
  describeContainment,
  describeControllers,
  removeSharedCgroups,
  type Containment,
} from '../process/containment.js';
import { TaskNamespace } from '../process/task-namespace.js';
import { countOwnChildren } from '../process/process-table.js';
import { describeSandboxing, sandboxPolicyOf } from './tasks/task-sandbox.js';
import { describeFreeBytes } from '../errors.js';
import { limitPolicyOf } from './tasks/task-limits.js';
import { OutputFiles } from './output/output-files.js';
import { interruptStaleTasks } from './tasks/reconcile.js';
import { Retention } from './tasks/retention.js';
import { inheritedEnvironment } from './tasks/task-environment.js';
import { TaskService } from './tasks/task-service.js';
import { WorkerPool } from './tasks/worker-pool.js';
import { ReadPool } from './output/read-pool.js';
import { TodoDelivery } from './todos/todo-delivery.js';
import { DaemonMetrics } from './metrics.js';
import { TaskCallers } from './callers/task-callers.js';
import { watchStorage } from './registry/storage-watch.js';
import { ApprovalBoard, type TaskCallCheck } from './policy/approvals.js';
import { ApprovalInputs } from './mcp/approval-inputs.js';
import { describePolicy, loadPolicy } from './policy/policy-file.js';
import { OperatorRoutes } from './http/operator-routes.js';

/** The outbox entries GET /todos lists at most, oldest first. */
const OUTBOX_LISTED = 1000;

const DAY_MS = 86_400_000;

/** At a stop, how long the harness gets to take the last todos (the interrupted tasks' ends). */
const STOP_DRAIN_MS = 2000;

export interface RunningDaemon {
  url: string;
  stop(): Promise<void>;
}

export async function startDaemon(config: Config, token: string | null, log: Logger): Promise<RunningDaemon> {
  mkdirSync(config.stateDir, { recursive: true, mode: 0o700 });
  const unlock = lockStateDir(config.stateDir);
  const containment = chooseContainment(config.containment, config.cgroupRoot, config.stateDir);
  try {
    return await serve(config, token, log, containment, unlock);
  } catch (error) {
    removeSharedCgroups(containment); // a start that fails leaves no folder of its own
    throw error;
  }
}

async function serve(
  config: Config,
  token: string | null,
  log: Logger,
  containment: Containment,
  unlock: () => void,
): Promise<RunningDaemon> {
  const policy = loadPolicy(config, containment.spawner);
  const approvals = policy && new ApprovalBoard(policy.askTimeoutMs);
  const namespace = await startTaskNamespace(config, containment, log);
  const files = new OutputFiles(config.stateDir);
  const store = new TaskStore(config.stateDir, () => files.highestGeneratedNumber());
  if (store.setAside !== null) {
    log.error(
      { set_aside: store.setAside.path, reason: store.setAside.reason },
      'the registry was damaged on disk: it was set aside and a fresh one started; its tasks are forgotten, their output files kept',
    );
  }
  const interrupted = await interruptStaleTasks(store, containment, files);
  if (interrupted.length > 0)
    log.warn({ tasks: interrupted.map((task) => task.id) }, 'marked tasks left by the last daemon as interrupted');
  const delivery = config.agentSocket === null ? null : new TodoDelivery(store.outbox, config.agentSocket, log);
  delivery?.start();
  const pool = new WorkerPool(config.workerIdleSeconds * 1000);
  const limitPolicy = limitPolicyOf(config, containment.controllers);
  const sandboxPolicy = sandboxPolicyOf(config.defaultSandbox, config.sandboxFloor);
  const tasks = new TaskService(
    store,
    pool,
    files,
    { ...config, limitPolicy, sandboxPolicy, policy, approvals },
    containment,
    inheritedEnvironment(),
    log,
  );
  const retention = new Retention(store, files, config.retentionDays, config.retentionCount);
  tasks.events.onTaskEnded((record) => {
    log.info({ task: record.id, state: record.state, exit_code: record.exitCode, signal: record.signal }, 'task ended');
    retention.noteFinished();
  });
  tasks.events.onTaskReplaced(() => retention.noteReplaced());
  const reads = new ReadPool();
  const callers = new TaskCallers(tasks, containment, config.tasksMayCall, log);
  const fromTask: TaskCallCheck = (req) => callers.taskCallerOf(req);
  const tools = createToolRegistry(TOOLS, { tasks, reads, callers }, VERSION, log, {
    todos: config.agentSocket !== null,
  });
  const sessions = new SessionManager(tools, config, log);
  const inputs = new ApprovalInputs(approvals, fromTask);
  const mcpTasks = new McpTasks(tasks, Math.round(config.retentionDays * DAY_MS), inputs);
  const stateless = new StatelessEndpoint(tools, mcpTasks, inputs, log);
  const storage = watchStorage(store, config.stateDir, log);
  /** How tasks are contained, isolated, limited and sandboxed here: for /healthz and the start line. */
  const setup = () => ({
    containment: describeContainment(containment),
    task_isolation: describeIsolation(namespace),
    limits: describeControllers(containment),
    sandbox: describeSandboxing(containment.sandbox, sandboxPolicy, config.tasksMayCall),
    policy: describePolicy(policy),
  });
  const health = () => ({
    ok: store.storageFault === null,
    state_dir: {
      path: config.stateDir,
      writable: store.storageFault === null,
      fault: store.storageFault,
      held_writes: store.heldWrites,
      free: describeFreeBytes(config.stateDir),
    },
    version: VERSION,
    ...setup(),
    tasks: tasks.countByState(),
    sessions: sessions.size,
    worker_threads: pool.threads,
    children: countOwnChildren(),
    todos: {
      socket: config.agentSocket,
      harness_connected: delivery?.connected ?? false,
      outbox_depth: store.outbox.depth(),
    },
    registry: store.setAside === null ? null : { set_aside: store.setAside.path, reason: store.setAside.reason },
  });
  const metrics = new DaemonMetrics({
    version: VERSION,
    containment: containment.mode,
    stateDir: config.stateDir,
    interruptedAtStart: interrupted.length,
    tasks,
    outboxDepth: () => store.outbox.depth(),
    harness: delivery,
    stateDirWritable: () => store.storageFault === null,
  });
  tasks.events.onTransition((task, event, effects) => metrics.observeTransition(task, event, effects));
  const todos = () => ({
    socket: config.agentSocket,
    harness_connected: delivery?.connected ?? false,
    outbox_depth: store.outbox.depth(),
    outbox: store.outbox.listOldest(OUTBOX_LISTED).map((entry) => ({
      key: entry.key,
      version: entry.version,
      queued_at: new Date(entry.queuedAt).toISOString(),
      request: JSON.parse(entry.line) as unknown,
    })),
  });
  const server = createHttpServer({
    guard: createRequestGuard(config.host, token),
    limits: config,
    callers,
    sessions,
    stateless,
    health,
    todos,
    operator: new OperatorRoutes(policy, approvals, fromTask),
    metrics,
    log,
  });
  // An MCP request keeps the worker threads up, or starts them again: a run may follow.
  server.on('request', (req: { url?: string }) => req.url?.startsWith('/mcp') && pool.warm());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}/mcp`;
  const described = setup();
  log.info({ url, ...described, state_dir: config.stateDir, version: VERSION }, 'serving');
  const isolation = described.task_isolation;
  if (!isolation.namespace.in_force)
    log.warn(
      { reason: isolation.namespace.reason },
      "tasks share the daemon's PID and mount namespaces: they can see and signal it, and write its state dir",
    );

  return {
    url,
    async stop() {
      server.close();
      server.closeAllConnections();
      await sessions.closeAll();
      await tasks.stop();
      store.commit(); // the interrupted ends' todos are in the outbox before its drain is awaited
      await delivery?.drain(STOP_DRAIN_MS);
      delivery?.stop();
      retention.stop();
      clearInterval(storage);
      await Promise.all([pool.close(), reads.close()]);
      namespace.stop();
      await tasks.removeUnreleasedCgroups();
      removeSharedCgroups(containment);
      store.close();
      unlock();
    },
  };
}

/** The tasks' own namespace (made once; again should its init die), which the spawners join. */
async function startTaskNamespace(config: Config, containment: Containment, log: Logger): Promise<TaskNamespace> {
  const plan = {
    readOnly: [config.stateDir],
    hidden: [config.authTokenFile, config.policyFile].flatMap((file) => (file === null ? [] : [resolve(file)])),
  };
  const namespace = await TaskNamespace.start(config.taskNamespace, containment.spawner, plan, (why, replaced) => {
    const next = replaced
      ? 'a new namespace is made for the next tasks'
      : `the next tasks start in the daemon's namespaces (${namespace.describe().reason})`;
    log.error({ why, task_isolation: describeIsolation(namespace) }, `${why}: ${next}`);
  });
  containment.namespace = namespace;
  return namespace;
}

/** What keeps tasks from the daemon: its own name, no command text in any argv, their namespace. */
function describeIsolation(namespace: TaskNamespace) {
  return { process_title: process.title, command_in_argv: false, namespace: namespace.describe() };
}
