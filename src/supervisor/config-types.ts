// The daemon's settings (Config), which config.ts builds from flags and variables, and the shape of one
// flag's entry in the option table (OptionSpec, config-options.ts): types only, so that both
// modules and the tables they read stand on this one and none imports another back.
import type { z } from 'zod';
import type { ContainmentChoice } from '../process/containment.js';
import type { NamespaceChoice } from '../process/task-namespace.js';
import type { RequestedSandbox } from './tasks/task-sandbox.js';
import type { TasksMayCall } from './callers/task-callers.js';

export interface Config {
  host: string;
  port: number;
  stateDir: string;
  agentSocket: string | null;
  maxRunning: number;
  maxPending: number;
  defaultTimeoutSeconds: number | null;
  killGraceMs: number;
  maxOutputBytes: number;
  retentionDays: number;
  retentionCount: number;
  authTokenFile: string | null;
  sessionIdleSeconds: number;
  workerIdleSeconds: number;
  /** MCP sessions (the 2025 era) open at once, in all and from one peer. */
  maxSessions: number;
  maxSessionsPerPeer: number;
  /** HTTP connections open at once, in all and from one peer. */
  maxConnections: number;
  maxConnectionsPerPeer: number;
  /** From a request's first byte: its headers, and the whole of it, must have arrived within these. */
  headersTimeoutSeconds: number;
  requestTimeoutSeconds: number;
  logLevel: string;
  containment: ContainmentChoice;
  taskNamespace: NamespaceChoice;
  /** The sandbox of a run that gives none, and the widest one any run may have; null: none. */
  defaultSandbox: RequestedSandbox | null;
  sandboxFloor: RequestedSandbox | null;
  /** The command policy's file, and how long an exec its rules ask about waits for a person. */
  policyFile: string | null;
  policyAskTimeoutSeconds: number;
  /** What a call from one of the daemon's own tasks may do. */
  tasksMayCall: TasksMayCall;
  cgroupRoot: string | null;
  /** Each task's limits unless its run sets lower ones, and the most a run may ask for; null: none. */
  taskMemoryLimitMb: number | null;
  taskMaxProcesses: number | null;
  taskCpuLimit: number | null;
  taskMemoryLimitMbCeiling: number | null;
  taskMaxProcessesCeiling: number | null;
  taskCpuLimitCeiling: number | null;
}

export interface OptionSpec {
  flag: string;
  key: keyof Config;
  /** Environment variable; by default HIVE_BASH_ and the flag in upper snake case. */
  env?: string;
  schema: z.ZodType;
  accepts: string;
  default: Config[keyof Config];
  help: string;
}
