// One task on a worker thread, from spawn until its worker lets go of it (the release): launches
// it, has its output written into capped files (by its shim for a pipe task, pumped here for a
// terminal or without the native spawner), writes its input, times it out, and reports each change
// on its port.
import type { MessagePort } from 'node:worker_threads';
import {
  NO_FINAL_FIGURES,
  type FinalFigures,
  type LaunchedTask,
  type LaunchStdio,
  type LeaderStart,
} from '../process/launched-task.js';
import { launchNative } from '../process/launch-native.js';
import { launchNode } from '../process/launch-node.js';
import { terminate, type TerminationHandle } from '../process/terminate.js';
import { watchOomKills } from './oom-watch.js';
import { NO_LIMIT_FIGURES } from '../process/task-cgroups.js';
import { openOutputFiles, pumpOutput, shimOutputFiles, shimOutputWritten } from './output-cap.js';
import type {
  ControlMessage,
  EndReason,
  InputRefusal,
  KillSignal,
  ReleasedReport,
  ReportEnvelope,
  StreamName,
  TaskSpec,
} from './protocol.js';
import { PipeInput, queueRefusal, type TaskInput } from './task-input.js';
import { TaskTerminal } from './task-terminal.js';
import { withTimeout } from '../with-timeout.js';

/** How long the end's report waits for output still in the pipes when the leader has exited. */
const OUTPUT_DRAIN_MS = 100;
/** How long an input's answer waits for the task to take the text before saying how much is still pending. */
const INPUT_WAIT_MS = 1000;
/** The least time a shim has, after a SIGKILL, to end its task before it is killed (the kill grace if longer). */
const SHIM_KILL_WAIT_MS = 1000;
/** The longest delay a Node timer holds: 2^31 - 1 ms; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What a task is launched with, and needs no more once launched: up to megabytes (a run's `env` and `stdin`). */
type LaunchInputs = Pick<TaskSpec, 'command' | 'env' | 'stdin'>;
/** The rest of a task's spec, which the run keeps for the task's life. */
type RunSettings = Omit<TaskSpec, keyof LaunchInputs>;

/**
 * Moves the inputs out of `spec`, this thread's own copy: piscina holds the message that brought it
 * until the run ends, and a task may run for days. 64 tasks with a 1 MiB `env` held 75 MB of this
 * thread's heap until they ended.
 */
function takeInputs(spec: TaskSpec): LaunchInputs {
  const inputs = { command: spec.command, env: spec.env, stdin: spec.stdin };
  Object.assign(spec, { command: '', env: {}, stdin: null } satisfies LaunchInputs);
  return inputs;
}

/** Whether an OOM kill ended the task (its watcher saw one), and how to stop watching. */
interface OomWatch {
  killed: boolean;
  stop: () => void;
}

export class TaskRun {
  private launched: LaunchedTask | null = null;
  private terminal: TaskTerminal | null = null;
  private input: TaskInput | null = null;
  /** Set once the task is let go: input has nowhere to go. */
  private writingStopped = false;
  private reason: EndReason | null = null;
  private termination: TerminationHandle | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Armed by the first SIGKILL: ends the task without its shim if the shim has not exited by then. */
  private shimWatch: NodeJS.Timeout | null = null;
  private exited = false;
  /** Control messages that came before the launch, which waits for the output files: carried out after it. */
  private early: ControlMessage[] | null = [];
  /** Reports that a stream's output stopped being kept. */
  private readonly onTruncated = (stream: StreamName, reason: string) =>
    this.report({ type: 'truncated', stream, reason });

  private readonly spec: RunSettings;
  /** Held only until the launch has used them (the stdin text then waits in the input's own copy). */
  private inputs: LaunchInputs | null;

  constructor(
    spec: TaskSpec,
    private readonly port: MessagePort,
  ) {
    this.inputs = takeInputs(spec);
    this.spec = spec;
  }

  async run(): Promise<void> {
    // From here control messages reach this run: the supervisor holds back what it sent before.
    this.report({ type: 'accepted' });
    try {
      await this.supervise();
    } finally {
      this.stopWriting(); // whatever failed
    }
  }

  /** Nothing more is written to the task, and its terminal is closed (idempotent). */
  private stopWriting(): void {
    this.writingStopped = true;
    this.input?.stop();
    this.terminal?.close();
  }

  /** The task from its launch to its release: its output, input, timeout and OOM kill, and the reports of its end. */
  private async supervise(): Promise<void> {
    let fds: [number, number];
    try {
      fds = await this.openOutput();
    } catch (error) {
      return this.endUnlaunched(error as Error);
    }
    // A pipe task's shim writes its output files itself: no stream of it passes through this thread.
    const shimWrites = this.terminal === null && this.spec.spawner === 'native';
    const launched = this.launchInto(fds, shimWrites);
    const oom = this.watchOom(launched);
    const pumps = this.writeOutput(launched, fds, shimWrites);
    void launched.started.then((started) => this.onStart(started));
    // The native shim says when nothing of the task is left (Node's spawn could only poll /proc for it).
    let gone = false;
    if (this.spec.spawner === 'native') void launched.gone().then(() => (gone = true));
    const exit = await launched.exit;
    // A kill that came after the leader had exited by itself (its shim says so) did not end it.
    if (exit.afterKill === false && exit.signal === null && exit.error === null) this.reason = null;
    const oomKilled = this.afterLeaderExit(launched, oom);
    await this.drainOutput(launched, pumps);
    const ended = {
      type: 'ended',
      reason: this.reason ?? 'exit',
      ...exit,
      oomKilled,
      left: 0,
      ...NO_FINAL_FIGURES,
    } as const;
    // Nothing of the task is left (its shim has exited by itself, having reported the leader's
    // end, which it does only once its subtree is gone): the end is final, and it goes with the
    // release in one report. A shim killed before that (its exit then carries an error) may have
    // left processes that still hold the output pipes: the end goes out now, the release later.
    const together = gone && this.termination === null && exit.error === null;
    // What an end of its own left is counted for its todo; a kill's is about to die.
    const left = !together && this.reason === null ? await launched.countAlive() : 0;
    if (!together) this.report({ ...ended, ...this.figuresSoFar(launched), left });
    const released = await this.release(launched, pumps);
    const { cpuMs, pidsLimitHits, memoryPeakBytes } = released;
    if (!together) this.report(released);
    else
      this.report({ type: 'ended-and-released', ended: { ...ended, cpuMs, pidsLimitHits, memoryPeakBytes }, released });
  }

  /** Opens the task's terminal, if it has one, and its output files. */
  private openOutput(): Promise<[number, number]> {
    // First: from here on the terminal's master is this worker's to close.
    if (this.spec.terminal !== null) this.terminal = new TaskTerminal(this.spec.terminal);
    return openOutputFiles([this.spec.stdoutPath, this.spec.stderrPath]);
  }

  /** Ends and releases a task whose terminal or output files could not be opened: it never runs. */
  private endUnlaunched(error: Error): void {
    this.report({
      type: 'ended',
      reason: 'exit',
      exitCode: null,
      signal: null,
      error: error.message,
      endedAt: Date.now(),
      oomKilled: false,
      left: 0,
      ...NO_FINAL_FIGURES,
    });
    this.report({ type: 'released', stdoutBytes: 0, stderrBytes: 0, ...NO_FINAL_FIGURES });
    this.stopWriting();
    this.takeEarlyMessages(); // an input is refused as ended; a kill finds nothing to end
  }

  /** Launches the task with its output going to `fds`, then takes its execs, its input and the control messages. */
  private launchInto(fds: [number, number], shimWrites: boolean): LaunchedTask {
    const terminal = this.terminal;
    const inputs = this.inputs!;
    this.inputs = null;
    const stdin = inputs.stdin === null && !this.spec.interactive ? 'null' : 'pipe';
    const launched = this.launch(
      inputs,
      terminal !== null
        ? { terminalFd: terminal.slaveFd, devptsFd: terminal.devptsFd }
        : shimWrites
          ? { stdin, output: shimOutputFiles(fds, this.spec, this.onTruncated) }
          : { stdin },
    );
    this.launched = launched;
    launched.onExec((event) => this.report({ type: 'exec', ...event }));
    this.openInput(terminal === null ? launched.stdin && new PipeInput(launched.stdin) : terminal.input, inputs.stdin);
    this.takeEarlyMessages();
    return launched;
  }

  /** Where a memory cgroup v1 holds the task, watches for OOM kills: one ends the whole task. */
  private watchOom(launched: LaunchedTask): OomWatch {
    const watch: OomWatch = { killed: false, stop: () => {} };
    if (this.spec.cgroups.v1.some((cgroup) => cgroup.controller === 'memory'))
      watch.stop = watchOomKills(launched, () => {
        watch.killed = true;
        this.signalTask('SIGKILL');
      });
    return watch;
  }

  /** Has the task's output written to its files; resolves to the bytes kept of each stream. */
  private writeOutput(launched: LaunchedTask, fds: [number, number], shimWrites: boolean): Promise<[number, number]> {
    const terminal = this.terminal;
    if (terminal !== null) {
      if (!this.spec.interactive) terminal.keepAtEndOfFile();
      // A terminal carries both streams (stderr's file stays empty), and its output ends once
      // nothing of the task is left and the terminal has been read to the end.
      void launched
        .gone()
        .then(() => terminal.finish())
        .catch(() => terminal.close());
    }
    if (shimWrites) return shimOutputWritten(launched, fds);
    return Promise.all([
      pumpOutput(terminal?.output ?? launched.stdout, fds[0], 'stdout', this.spec, this.onTruncated),
      pumpOutput(terminal ? null : launched.stderr, fds[1], 'stderr', this.spec, this.onTruncated),
    ]);
  }

  /** Once the leader has exited: stops its timer and OOM watch; whether an OOM kill ended it (then all of it is killed). */
  private afterLeaderExit(launched: LaunchedTask, oom: OomWatch): boolean {
    this.exited = true;
    oom.stop();
    if (this.timer) clearTimeout(this.timer);
    let oomKilled = oom.killed;
    if (!oomKilled && this.spec.limits.memoryLimitMb !== null) oomKilled = (launched.limitFigures().oomKills ?? 0) > 0;
    // An OOM kill ends the whole task (memory.oom.group in v2; here, for v1 or a helper that outlived it).
    if (oomKilled) this.signalTask('SIGKILL');
    return oomKilled;
  }

  /**
   * What the leader wrote before it exited may still sit in the pipes: lets it reach the files
   * first, so the end's report and tails are complete (a shim writing the files has put the
   * leader's own output there before it tells its exit); and the shim may be reaping the last of
   * the task. A descendant holding a pipe open, or still running, costs at most OUTPUT_DRAIN_MS of
   * delay, never the end itself.
   */
  private drainOutput(launched: LaunchedTask, pumps: Promise<[number, number]>): Promise<unknown> {
    const native = this.spec.spawner === 'native';
    return withTimeout<unknown, undefined>(
      native ? Promise.all([pumps, launched.gone()]) : pumps,
      OUTPUT_DRAIN_MS,
      undefined,
    );
  }

  /** The figures so far, which stand in for the final ones until the release brings those. */
  private figuresSoFar(launched: LaunchedTask): FinalFigures {
    const limited = Object.values(this.spec.limits).some((limit) => limit !== null);
    const { pidsLimitHits, memoryPeakBytes } = limited ? launched.limitFigures() : NO_LIMIT_FIGURES;
    return { cpuMs: launched.cpuMsSoFar(), pidsLimitHits, memoryPeakBytes };
  }

  /** Waits until the worker can let go of the task (its output written, its kill done, nothing of it left), then tears it down. */
  private async release(launched: LaunchedTask, pumps: Promise<[number, number]>): Promise<ReleasedReport> {
    const [stdoutBytes, stderrBytes] = await pumps;
    // The pipes can close before the task is gone (a kill in progress): finish the escalation first.
    await this.termination?.done;
    if (this.spec.spawner === 'native') await launched.gone();
    this.stopWriting();
    const final = await launched.teardown();
    return { type: 'released', stdoutBytes, stderrBytes, ...final };
  }

  private launch({ command, env }: LaunchInputs, stdio: LaunchStdio): LaunchedTask {
    const { cwd, cgroups, namespaceFd, cpuWeight, sandbox, sandboxWithoutNamespaces, policy } = this.spec;
    const request = {
      command,
      env,
      cwd,
      stdio,
      cgroups,
      namespaceFd,
      cpuWeight,
      sandbox,
      sandboxWithoutNamespaces,
      policy,
    };
    return this.spec.spawner === 'native' ? launchNative(request) : launchNode(request);
  }

  /** Writes the stdin text, then closes stdin unless the task is interactive. */
  private openInput(input: TaskInput | null, stdin: string | null): void {
    this.input = input;
    const { interactive } = this.spec;
    if (input === null || (stdin === null && interactive)) return;
    // The task may end without reading it: EPIPE (or EIO on a terminal) is no failure.
    input.write(stdin ?? '', !interactive).catch(() => {});
  }

  private async onInput(requestId: number, text: string, eof: boolean): Promise<void> {
    let refusal: InputRefusal | null = null;
    if (this.writingStopped) refusal = { code: 'ERR_INPUT_ENDED', detail: null };
    else if (this.input === null) refusal = { code: 'ERR_INPUT_NOT_INTERACTIVE', detail: 'the task has no open stdin' };
    else if (this.input.closed) refusal = { code: 'ERR_INPUT_STDIN_CLOSED', detail: null };
    else refusal = queueRefusal(this.input, text) ?? (await writeInput(this.input, text, eof));
    this.report({ type: 'input-done', requestId, pendingBytes: this.input?.pendingBytes ?? 0, refusal });
  }

  private onStart({ pid, pgid, namespacePid, startedAt, shimPid }: LeaderStart): void {
    this.report({ type: 'started', pid, pgid, namespacePid, startedAt, shimPid });
    if (this.spec.timeoutMs !== null && !this.exited) this.endAfter(this.spec.timeoutMs);
  }

  /**
   * Ends the task as timed out `ms` from now. Node's timers hold at most 2^31 - 1 ms (24.8 days):
   * a longer one fired at once (a timeout of 3,000,000 s ended its task after 3 ms), so it waits
   * in steps.
   */
  private endAfter(ms: number): void {
    const step = Math.min(ms, MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      if (ms > step) this.endAfter(ms - step);
      else this.startTermination('timed_out', 'SIGTERM');
    }, step);
  }

  onControl(message: ControlMessage): void {
    if (this.early !== null) return void this.early.push(message);
    // Without a launch (its output files could not be opened) the task has already ended.
    if (message.type === 'kill' && this.launched) this.startTermination('killed', message.signal);
    else if (message.type === 'input') void this.onInput(message.requestId, message.text, message.eof);
    else if (message.type === 'exec-answer') this.launched?.answerExec(message.seq, message.allow, message.reason);
  }

  /** Carries out the control messages that came before the launch, and each one from now on as it comes. */
  private takeEarlyMessages(): void {
    const early = this.early ?? [];
    this.early = null;
    for (const message of early) this.onControl(message);
  }

  private startTermination(reason: EndReason, signal: KillSignal): void {
    // After the leader's own exit, a kill ends what it left but does not change why it ended.
    if (!this.exited) this.reason ??= reason;
    if (this.timer) clearTimeout(this.timer);
    if (this.termination) {
      if (signal !== 'SIGKILL') return;
      // A later force skips the grace period, and is sent even if an earlier SIGKILL was: what
      // outlived it (a fork racing the shim's walk) stays killable.
      this.termination.forceNow();
      this.signalTask('SIGKILL');
      return;
    }
    const launched = this.launched!;
    const target = { signal: (sent: KillSignal) => this.signalTask(sent), gone: () => launched.gone() };
    this.termination = terminate(target, signal, this.spec.killGraceMs);
  }

  /**
   * Signals the whole task. The first SIGKILL gives its shim the kill grace (at least
   * SHIM_KILL_WAIT_MS) to end it; a shim still there then (stopped, stuck in the kernel) is killed,
   * and the task ended without it.
   */
  private signalTask(signal: KillSignal): void {
    const launched = this.launched!;
    launched.signal(signal);
    if (signal !== 'SIGKILL' || this.shimWatch !== null || this.spec.spawner !== 'native') return;
    const watch = setTimeout(() => launched.endStuck(), Math.max(this.spec.killGraceMs, SHIM_KILL_WAIT_MS));
    this.shimWatch = watch;
    void launched.gone().then(() => clearTimeout(watch));
  }

  private report(message: ReportEnvelope['message']): void {
    this.port.postMessage({ runKey: this.spec.runKey, message } satisfies ReportEnvelope);
  }
}

/** Writes an input; null once the task took it all, or after INPUT_WAIT_MS with some of it still pending. */
function writeInput(input: TaskInput, text: string, eof: boolean): Promise<InputRefusal | null> {
  const written = input.write(text, eof).then(
    () => null,
    (failure: Error): InputRefusal => ({
      code: 'ERR_INPUT_WRITE_FAILED',
      detail: `its stdin could not take it: ${failure.message}`,
    }),
  );
  return withTimeout(written, INPUT_WAIT_MS, null);
}
