// A task's spec as the supervisor hands it to a worker, for a TaskRun or a pool in a test's own
// process: Node's spawn, no cgroups, sandbox or policy, unless the test says otherwise.
import { NO_LIMITS } from '../../src/process/limits.js';
import type { TaskSpec } from '../../src/workers/protocol.js';

type Given = Pick<TaskSpec, 'taskId' | 'runKey' | 'command' | 'cwd' | 'env' | 'stdoutPath' | 'stderrPath'>;

export function testTaskSpec(given: Given & Partial<TaskSpec>): TaskSpec {
  return {
    stdin: null,
    interactive: false,
    terminal: null,
    maxOutputBytes: 0,
    timeoutMs: null,
    killGraceMs: 5000,
    spawner: 'node',
    namespaceFd: null,
    cpuWeight: { via: 'none', reason: "Node's spawn" },
    sandbox: null,
    sandboxWithoutNamespaces: false,
    cgroups: { v2: null, v1: [] },
    limits: NO_LIMITS,
    policy: null,
    ...given,
  };
}
