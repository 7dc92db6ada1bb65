// Wires the daemon together: registry, workers, tasks, MCP and HTTP; and takes it apart on stop.
import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from './config/config.js';
import { VERSION } from '../shared/version.js';
import { createRequestGuard } from './http/guard.js';
import { createHttpServer } from './http/server.js';
import { listenOnIpv6Loopback, NO_IPV6, takesIpv6Loopback } from './http/ipv6-loopback.js';
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
  type ChosenContainment,
  type HostSetup,
} from '../process/containment.js';
import { TaskNamespace } from '../process/task-namespace.js';
import { planHiding, type SecretFile } from '../process/hidden-paths.js';
import { probeSandboxSupport } from '../process/sandbox.js';
import { loadNative } from '../process/native.js';
import { countOwnChildren } from '../process/process-table.js';
import { checkSandboxPolicy, describeSandboxing, sandboxPolicyOf, type SandboxPolicy } from './tasks/task-sandbox.js';
import { describeFreeBytes } from '../errors.js';
import { limitPolicyOf } from './tasks/task-limits.js';
import { inodesProblem, makeOutputDir, OutputFiles } from './output/output-files.js';
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
import { commitAtStop, keepDiskReserve, lockWithRoom } from './registry/disk-reserve.js';
import { StateDirCheck } from './registry/state-dir-check.js';
import { unheldPromises } from './unheld-promises.js';
import { ApprovalBoard, type TaskCallCheck } from './policy/approvals.js';
import { ApprovalInputs } from './mcp/approval-inputs.js';
import { TaskPush } from './mcp/task-push.js';
import { describePolicy, loadPolicy, type LoadedPolicy } from './policy/policy-file.js';
import { OperatorRoutes } from './http/operator-routes.js';

/** The outbox entries GET /todos lists at most, oldest first. */
const OUTBOX_LISTED = 1000;
/**
 * The bytes of their requests it lists at most: an answer past the bound on answers not taken
 * (32 MiB) was cut (1,000 todos of commands and tails of control bytes made 36 MB).
 */
const OUTBOX_LISTED_BYTES = 4 * 1024 * 1024;

const DAY_MS = 86_400_000;

/** At a stop, how long the harness gets to take the last todos (the interrupted tasks' ends). */
const STOP_DRAIN_MS = 2000;

export interface RunningDaemon {
  url: string;
  stop(): Promise<void>;
}

export async function startDaemon(config: Config, token: string | null, log: Logger): Promise<RunningDaemon> {
  mkdirSync(config.stateDir, { recursive: true, mode: 0o700 });
  const unlock = lockWithRoom(config.stateDir, () => lockStateDir(config.stateDir), log);
  const hostSetup = await setUpHost(config, log);
  try {
    return await serve(config, token, log, hostSetup, unlock);
  } catch (error) {
    // A start that fails leaves no namespace and no folder of its own.
    await hostSetup.namespace.stop();
    await removeSharedCgroups(hostSetup);
    throw error;
  }
}

/** The host's setup, whole: the containment for the config, then the tasks' namespace its spawner joins. */
async function setUpHost(config: Config, log: Logger): Promise<HostSetup> {
  const chosen = chooseContainment(config.containment, config.cgroupRoot, config.stateDir);
  try {
    const namespace = await startTaskNamespace(config, chosen, log);
    const { in_force: inForce, sandbox_refused: refused, reason } = namespace.describe();
    return { ...chosen, namespace, sandbox: probeSandboxSupport(chosen.spawner, inForce, refused, reason) };
  } catch (error) {
    await removeSharedCgroups(chosen);
    throw error;
  }
}

/** The registry and the output files, the tasks the last daemon left ended as interrupted. */
interface Storage {
  files: OutputFiles;
  store: TaskStore;
  /** Whether the state dir is still the one opened. */
  check: StateDirCheck;
  /** How many tasks were marked interrupted at this start. */
  interrupted: number;
}

/** What runs tasks: the command policy, the todos' delivery, the workers, the service and its retention. */
interface TaskSide {
  policy: LoadedPolicy | null;
  approvals: ApprovalBoard | null;
  sandboxPolicy: SandboxPolicy;
  delivery: TodoDelivery | null;
  pool: WorkerPool;
  tasks: TaskService;
  retention: Retention;
}

/** What answers MCP calls: both eras' endpoints, the output reads, and who calls from inside a task. */
interface McpSide {
  reads: ReadPool;
  callers: TaskCallers;
  fromTask: TaskCallCheck;
  sessions: SessionManager;
  stateless: StatelessEndpoint;
}

async function serve(
  config: Config,
  token: string | null,
  log: Logger,
  hostSetup: HostSetup,
  unlock: () => void,
): Promise<RunningDaemon> {
  const policy = loadPolicy(config, hostSetup.spawner);
  const storage = await openStorage(config, hostSetup, log);
  const taskSide = startTaskSide(config, hostSetup, storage, policy, log);
  const mcp = startMcpSide(config, hostSetup, taskSide, log);
  const storageWatch = watchStorage(storage, config.stateDir, log);
  const setup = () => describeSetup(config, hostSetup, taskSide);
  const server = createHttpServer({
    guard: createRequestGuard(config.host, token),
    limits: config,
    callers: mcp.callers,
    sessions: mcp.sessions,
    stateless: mcp.stateless,
    health: () => healthOf(config, storage, taskSide, mcp, setup()),
    todos: () => outboxOf(config, storage.store, taskSide.delivery),
    operator: new OperatorRoutes(taskSide.policy, taskSide.approvals, mcp.fromTask),
    metrics: startMetrics(hostSetup, config, storage, taskSide),
    log,
  });
  // An MCP request keeps the worker threads up, or starts them again: a run may follow.
  server.on('request', (req: { url?: string }) => req.url?.startsWith('/mcp') && taskSide.pool.warm());
  const url = await listen(server, config);
  const twin = await holdIpv6Loopback(server, url, config, log);
  announce(log, url, setup(), config);
  const stop = async () => {
    twin?.close();
    server.close();
    server.closeAllConnections();
    await mcp.sessions.closeAll();
    await stopTaskSide(taskSide, storage.store, mcp.reads, storageWatch);
    commitAtStop(storage.store, config.stateDir, log);
    await hostSetup.namespace.stop();
    await taskSide.tasks.removeUnreleasedCgroups();
    await removeSharedCgroups(hostSetup);
    storage.store.close();
    unlock();
  };
  return { url, stop };
}

/** The output files and the registry (set aside if damaged), with the last daemon's unfinished tasks ended. */
async function openStorage(config: Config, hostSetup: HostSetup, log: Logger): Promise<Storage> {
  const files = new OutputFiles(config.stateDir);
  const store = new TaskStore(config.stateDir, () => files.highestGeneratedNumber());
  if (store.setAside !== null) {
    log.error(
      { set_aside: store.setAside.path, reason: store.setAside.reason },
      'the registry was damaged on disk: it was set aside and a fresh one started; its tasks are forgotten, their output files kept',
    );
  }
  const interrupted = await interruptStaleTasks(store, hostSetup, files);
  keepDiskReserve(config.stateDir);
  if (interrupted.count > 0)
    log.warn(
      { count: interrupted.count, tasks: interrupted.ids },
      'marked tasks left by the last daemon as interrupted (tasks: the first ones)',
    );
  return { files, store, check: new StateDirCheck(config.stateDir, files.dir), interrupted: interrupted.count };
}

/** The command policy, the todos' delivery, the workers, and the task service with its retention. */
function startTaskSide(
  config: Config,
  hostSetup: HostSetup,
  storage: Storage,
  policy: LoadedPolicy | null,
  log: Logger,
): TaskSide {
  const { files, store } = storage;
  const approvals = policy && new ApprovalBoard(policy.askTimeoutMs);
  const delivery = config.agentSocket === null ? null : new TodoDelivery(store.outbox, config.agentSocket, log);
  delivery?.start();
  const pool = new WorkerPool(config.workerIdleSeconds * 1000);
  const limitPolicy = limitPolicyOf(config, hostSetup.controllers);
  const sandboxPolicy = sandboxPolicyOf(config.defaultSandbox, config.sandboxFloor);
  checkSandboxPolicy(sandboxPolicy, hostSetup.sandbox);
  const tasks = new TaskService(
    store,
    pool,
    files,
    { ...config, limitPolicy, sandboxPolicy, policy, approvals },
    hostSetup,
    inheritedEnvironment(),
    log,
  );
  const retention = new Retention(store, files, config.retentionDays, config.retentionCount);
  tasks.events.onTaskEnded((record) => {
    log.info({ task: record.id, state: record.state, exit_code: record.exitCode, signal: record.signal }, 'task ended');
    retention.noteFinished();
  });
  tasks.events.onTaskReplaced(() => retention.noteReplaced());
  return { policy, approvals, sandboxPolicy, delivery, pool, tasks, retention };
}

/** The tools, both eras' endpoints and the reads they share, and the calls from inside tasks. */
function startMcpSide(config: Config, hostSetup: HostSetup, taskSide: TaskSide, log: Logger): McpSide {
  const { tasks, approvals } = taskSide;
  const reads = new ReadPool();
  const tokenHidden = config.authTokenFile !== null && hostSetup.namespace.describe().in_force;
  const callers = new TaskCallers(tasks, hostSetup, config.tasksMayCall, log, tokenHidden);
  const fromTask: TaskCallCheck = (req) => callers.taskCallerOf(req);
  const tools = createToolRegistry(TOOLS, { tasks, reads, callers }, VERSION, log, {
    todos: config.agentSocket !== null,
    approvals: approvals !== null,
  });
  const push = new TaskPush(tasks);
  const inputs = new ApprovalInputs(approvals, fromTask);
  const mcpTasks = new McpTasks(tasks, Math.round(config.retentionDays * DAY_MS), inputs);
  const sessions = new SessionManager(tools, config, log, push, mcpTasks);
  const stateless = new StatelessEndpoint(tools, mcpTasks, inputs, log, push, config.declineDiscover);
  return { reads, callers, fromTask, sessions, stateless };
}

/** How tasks are contained, isolated, limited and sandboxed here: for /healthz and the start line. */
function describeSetup(config: Config, hostSetup: HostSetup, taskSide: TaskSide) {
  return {
    containment: describeContainment(hostSetup),
    task_isolation: describeIsolation(hostSetup.namespace),
    limits: describeControllers(hostSetup),
    sandbox: describeSandboxing(hostSetup.sandbox, taskSide.sandboxPolicy, config.tasksMayCall),
    policy: describePolicy(taskSide.policy),
  };
}

type SetupView = ReturnType<typeof describeSetup>;

/** /healthz: the state dir, the setup, the tasks by state, the sessions, threads and children, the todos, the registry. */
function healthOf(config: Config, storage: Storage, taskSide: TaskSide, mcp: McpSide, setup: SetupView) {
  const { store } = storage;
  const fault = store.storageFault ?? storage.check.problem();
  return {
    ok: fault === null,
    state_dir: {
      path: config.stateDir,
      writable: stateDirTakesWrites(storage),
      fault,
      held_writes: store.heldWrites,
      free: describeFreeBytes(config.stateDir),
    },
    version: VERSION,
    ...setup,
    tasks: taskSide.tasks.countByState(),
    sessions: mcp.sessions.size,
    worker_threads: taskSide.pool.threads,
    children: countOwnChildren(),
    todos: {
      socket: config.agentSocket,
      harness_connected: taskSide.delivery?.connected ?? false,
      outbox_depth: store.outbox.depth(),
    },
    registry: store.setAside === null ? null : { set_aside: store.setAside.path, reason: store.setAside.reason },
  };
}

/** Whether the state dir takes writes: the registry's (else they are held), and a task's output files (inodes). */
function stateDirTakesWrites({ store, files }: Storage): boolean {
  return store.storageFault === null && inodesProblem(files.dir) === null;
}

/** GET /todos: the todo socket, whether the harness is connected, and the outbox's oldest entries. */
function outboxOf(config: Config, store: TaskStore, delivery: TodoDelivery | null) {
  return {
    socket: config.agentSocket,
    harness_connected: delivery?.connected ?? false,
    outbox_depth: store.outbox.depth(),
    outbox: listedOutbox(store),
  };
}

/** The outbox's oldest entries as GET /todos lists them: OUTBOX_LISTED at most, and OUTBOX_LISTED_BYTES of requests (one at least). */
function listedOutbox(store: TaskStore) {
  const listed = [];
  let bytes = 0;
  for (const entry of store.outbox.listOldest(OUTBOX_LISTED)) {
    const request = JSON.parse(entry.line) as unknown;
    bytes += Buffer.byteLength(JSON.stringify(request));
    if (listed.length > 0 && bytes > OUTBOX_LISTED_BYTES) break;
    listed.push({ key: entry.key, version: entry.version, queued_at: new Date(entry.queuedAt).toISOString(), request });
  }
  return listed;
}

/** The daemon's metrics, fed every task transition. */
function startMetrics(hostSetup: HostSetup, config: Config, storage: Storage, taskSide: TaskSide): DaemonMetrics {
  const { store } = storage;
  const metrics = new DaemonMetrics({
    version: VERSION,
    containment: hostSetup.mode,
    stateDir: config.stateDir,
    interruptedAtStart: storage.interrupted,
    tasks: taskSide.tasks,
    outboxDepth: () => store.outbox.depth(),
    harness: taskSide.delivery,
    stateDirWritable: () => stateDirTakesWrites(storage),
  });
  taskSide.tasks.events.onTransition((task, event, effects) => metrics.observeTransition(task, event, effects));
  return metrics;
}

/** Listens on the config's port and host; the MCP endpoint's URL. */
async function listen(server: Server, config: Config): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}/mcp`;
}

/** On 127.0.0.1, [::1] on the same port too (ipv6-loopback.ts); a warning where another process holds it. */
async function holdIpv6Loopback(server: Server, url: string, config: Config, log: Logger) {
  if (!takesIpv6Loopback(config.host)) return null;
  const port = Number(new URL(url).port);
  const twin = await listenOnIpv6Loopback(server, port);
  if (!('error' in twin)) return twin;
  if (!NO_IPV6.has(twin.error))
    log.warn(
      { error: twin.error },
      `[::1]:${port} is not this daemon's: a client that resolves localhost to ::1 reaches whatever listens there; give clients 127.0.0.1`,
    );
  return null;
}

/** The start line, and a warning for each promise that does not hold here. */
function announce(log: Logger, url: string, setup: SetupView, config: Config): void {
  log.info({ url, ...setup, state_dir: config.stateDir, version: VERSION }, 'serving');
  for (const line of unheldPromises(setup)) log.warn(line);
}

/** At a stop: the tasks ended as interrupted, their todos drained to the harness, the workers and reads closed. */
async function stopTaskSide(taskSide: TaskSide, store: TaskStore, reads: ReadPool, storageWatch: NodeJS.Timeout) {
  await taskSide.tasks.stop();
  store.commit(); // the interrupted ends' todos are in the outbox before its drain is awaited
  await taskSide.delivery?.drain(STOP_DRAIN_MS);
  taskSide.delivery?.stop();
  taskSide.retention.stop();
  clearInterval(storageWatch);
  await Promise.all([taskSide.pool.close(), reads.close()]);
}

/** The tasks' own namespace (made once; again should its init die), which the spawners join. */
async function startTaskNamespace(config: Config, chosen: ChosenContainment, log: Logger): Promise<TaskNamespace> {
  const secrets: SecretFile[] = [
    { path: config.authTokenFile, what: 'the token file (--auth-token-file)' },
    { path: config.policyFile, what: 'the policy file (--policy)' },
    { path: config.agentSocket, what: "the harness's socket (--agent-socket)" },
  ].flatMap(({ path, what }) => (path === null ? [] : [{ path, what }]));
  const { warnings, ...hiding } = planHiding(secrets);
  // Of the state dir, tasks see their output folder alone: the registry holds other runs' environments.
  const plan = { readOnly: [config.stateDir], shown: [makeOutputDir(config.stateDir)], ...hiding };
  const namespace = await TaskNamespace.start(config.taskNamespace, chosen.spawner, plan, (why, replaced) => {
    const next = replaced
      ? 'a new namespace is made for the next tasks'
      : `the next tasks start in the daemon's namespaces (${namespace.describe().reason})`;
    log.error({ why, task_isolation: describeIsolation(namespace) }, `${why}: ${next}`);
  });
  const { in_force: inForce, own_proc: ownProc } = namespace.describe();
  if (inForce) for (const warning of warnings) log.warn(warning);
  // Where tasks see the daemon in /proc, none may trace it or reach its memory there as its user.
  const native = loadNative();
  if ((!inForce || !ownProc) && 'addon' in native) native.addon.setDumpable(false);
  return namespace;
}

/** What keeps tasks from the daemon: its own name, no command text in any argv, their namespace. */
function describeIsolation(namespace: TaskNamespace) {
  return { process_title: process.title, command_in_argv: false, namespace: namespace.describe() };
}
