// The piscina entry: runs one task from spawn to the release of its output, reporting
// every state change over the task's MessagePort. Many tasks share one worker thread.
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { openOutputFile, pumpToFile } from './output-file.js';
import { terminateGroup, type TerminationHandle } from './terminate.js';
import type { ControlMessage, EndReason, KillSignal, ReportMessage, StreamName, TaskOutcome, TaskSpec } from './protocol.js';

/**
 * After the leader exits, how long its end waits for the output pipes to close. What the leader
 * wrote is already in the pipes; this lets it reach the files before run, status or the todo read
 * their tails. A grandchild holding a pipe open costs the end this delay and no more.
 */
const OUTPUT_SETTLE_MS = 100;

/** The kernel refuses one argv string longer than this (MAX_ARG_STRLEN); longer commands travel in the environment. */
const MAX_ARGUMENT_BYTES = 128 * 1024 - 1;

export default async function runTask(spec: TaskSpec): Promise<TaskOutcome> {
  try {
    await new TaskRun(spec).run();
    return { ok: true };
  } catch (error) {
    return { ok: false, error: (error as Error).stack ?? String(error) };
  } finally {
    spec.port.close();
  }
}

class TaskRun {
  private child: ChildProcess | null = null;
  private reason: EndReason | null = null;
  private termination: TerminationHandle | null = null;
  private pendingKill: KillSignal | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Set when the leader exits: a kill arriving while its end waits for the output is no longer why it ended. */
  private exited = false;

  constructor(private readonly spec: TaskSpec) {}

  async run(): Promise<void> {
    this.spec.port.on('message', (message: ControlMessage) => this.onControl(message));
    let fds: [number, number];
    try {
      fds = [openOutputFile(this.spec.stdoutPath), openOutputFile(this.spec.stderrPath)];
    } catch (error) {
      this.report({ type: 'ended', reason: 'exit', exitCode: null, signal: null, error: (error as Error).message, endedAt: Date.now() });
      this.report({ type: 'released', stdoutBytes: 0, stderrBytes: 0 });
      return;
    }
    const child = this.spawnLeader();
    const output = Promise.all([this.pump(child, 'stdout', fds[0]), this.pump(child, 'stderr', fds[1])]);
    const [[stdoutBytes, stderrBytes]] = await Promise.all([output, this.waitForLeader(child, output)]);
    // The pipes can close before the group is gone (a kill in progress): finish the escalation first.
    await this.termination?.done;
    this.report({ type: 'released', stdoutBytes, stderrBytes });
  }

  private spawnLeader(): ChildProcess {
    const { command, stdin } = this.spec;
    const long = Buffer.byteLength(command) > MAX_ARGUMENT_BYTES ? splitLongCommand(command) : null;
    const argv = long ? ['-c', long.script] : ['-c', command];
    const env = long ? { ...this.spec.env, ...long.env } : this.spec.env;
    const child = spawn('bash', argv, {
      cwd: this.spec.cwd,
      env,
      detached: true, // setsid(): the task leads a session and process group of its own
      stdio: [stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    if (stdin !== null && child.stdin) {
      child.stdin.on('error', () => {}); // the task may exit without reading: EPIPE is no failure
      child.stdin.end(stdin);
    }
    return child;
  }

  private pump(child: ChildProcess, stream: StreamName, fd: number): Promise<number> {
    const source = child[stream];
    if (!source) throw new Error(`the task's ${stream} is not a pipe`);
    return pumpToFile(source, fd, {
      path: stream === 'stdout' ? this.spec.stdoutPath : this.spec.stderrPath,
      maxBytes: this.spec.maxOutputBytes,
      onTruncated: () => this.report({ type: 'truncated', stream }),
    }).closed;
  }

  /** Resolves when the leader has exited and its end is reported: the task's end, whatever its pipes do. */
  private waitForLeader(child: ChildProcess, output: Promise<unknown>): Promise<void> {
    return new Promise((resolve) => {
      child.once('spawn', () => this.onSpawn(child));
      child.once('error', (error) => {
        // Only a failed spawn reaches here before 'exit'; later errors are on the pipes.
        if (child.pid !== undefined) return;
        this.finish({ exitCode: null, signal: null, error: `spawn failed: ${error.message}` });
        resolve();
      });
      child.once('exit', (code, signal) => {
        const endedAt = Date.now();
        this.exited = true;
        if (this.timer) clearTimeout(this.timer);
        let settle: NodeJS.Timeout | undefined;
        void Promise.race([output, new Promise((done) => (settle = setTimeout(done, OUTPUT_SETTLE_MS)))]).then(() => {
          clearTimeout(settle);
          this.finish({ exitCode: code ?? exitCodeOfSignal(signal), signal, error: null }, endedAt);
          resolve();
        });
      });
    });
  }

  private onSpawn(child: ChildProcess): void {
    const pid = child.pid as number;
    this.report({ type: 'started', pid, pgid: pid, startedAt: Date.now() });
    if (this.pendingKill) return this.startTermination('killed', this.pendingKill);
    if (this.spec.timeoutMs !== null) {
      this.timer = setTimeout(() => this.startTermination('timed_out', 'SIGTERM'), this.spec.timeoutMs);
    }
  }

  private onControl(message: ControlMessage): void {
    if (message.type !== 'kill') return;
    if (!this.child?.pid) {
      this.pendingKill = message.signal;
      return;
    }
    this.startTermination('killed', message.signal);
  }

  private startTermination(reason: EndReason, signal: KillSignal): void {
    if (!this.exited) this.reason ??= reason;
    if (this.timer) clearTimeout(this.timer);
    if (this.termination) {
      if (signal === 'SIGKILL') this.termination.forceNow();
      return;
    }
    this.termination = terminateGroup(this.child?.pid as number, signal, this.spec.killGraceMs);
  }

  private finish(result: { exitCode: number | null; signal: string | null; error: string | null }, endedAt = Date.now()): void {
    if (this.timer) clearTimeout(this.timer);
    this.report({ type: 'ended', reason: this.reason ?? 'exit', ...result, endedAt });
  }

  private report(message: ReportMessage): void {
    this.spec.port.postMessage(message);
  }
}

/** A shell's view of a signalled exit: 128 + the signal's number. */
function exitCodeOfSignal(signal: NodeJS.Signals | null): number | null {
  if (signal === null) return null;
  const number = osConstants.signals[signal];
  return number === undefined ? null : 128 + number;
}

/** UTF-16 units per part: at most 3 bytes each in UTF-8, so a part stays under MAX_ARGUMENT_BYTES. */
const LONG_COMMAND_PART_UNITS = 40_000;

/**
 * One environment string is capped like one argument, so a long command travels in parts that
 * bash joins, unsets and evaluates: the same as `bash -c COMMAND` but for $0.
 */
function splitLongCommand(command: string): { script: string; env: Record<string, string> } {
  const env: Record<string, string> = {};
  const names: string[] = [];
  for (let start = 0; start < command.length; ) {
    let end = Math.min(start + LONG_COMMAND_PART_UNITS, command.length);
    const last = command.charCodeAt(end - 1);
    if (end < command.length && last >= 0xd800 && last <= 0xdbff) end -= 1; // keep surrogate pairs whole
    const name = `HIVE_BASH_COMMAND_PART_${names.length}`;
    env[name] = command.slice(start, end);
    names.push(name);
    start = end;
  }
  const joined = names.map((name) => `$${name}`).join('');
  return { script: `__hive_bash_command="${joined}"; unset ${names.join(' ')}; eval "$__hive_bash_command"`, env };
}
