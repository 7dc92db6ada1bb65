// The series GET /metrics serves are a contract: dashboards, deploy/prometheus's rules and the
// bench read them by name. Each family's name, type, help and label names are listed below as the
// daemon served them before prom-client took over the exposition; a family renamed, retyped,
// relabelled, reworded, added or dropped fails here until this list is changed on purpose.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

/** [name, type, label names (histograms' `le` left out), help]: the contract. */
const CONTRACT: ReadonlyArray<readonly [string, string, string, string]> = [
  ['hive_bash_process_cpu_user_seconds_total', 'counter', '', 'Total user CPU time spent in seconds.'],
  ['hive_bash_process_cpu_system_seconds_total', 'counter', '', 'Total system CPU time spent in seconds.'],
  ['hive_bash_process_cpu_seconds_total', 'counter', '', 'Total user and system CPU time spent in seconds.'],
  ['hive_bash_process_start_time_seconds', 'gauge', '', 'Start time of the process since unix epoch in seconds.'],
  ['hive_bash_process_resident_memory_bytes', 'gauge', '', 'Resident memory size in bytes.'],
  ['hive_bash_process_virtual_memory_bytes', 'gauge', '', 'Virtual memory size in bytes.'],
  ['hive_bash_process_heap_bytes', 'gauge', '', 'Process heap size in bytes.'],
  ['hive_bash_process_open_fds', 'gauge', '', 'Number of open file descriptors.'],
  ['hive_bash_process_max_fds', 'gauge', '', 'Maximum number of open file descriptors.'],
  ['hive_bash_nodejs_eventloop_lag_seconds', 'gauge', '', 'Lag of event loop in seconds.'],
  ['hive_bash_nodejs_eventloop_lag_min_seconds', 'gauge', '', 'The minimum recorded event loop delay.'],
  ['hive_bash_nodejs_eventloop_lag_max_seconds', 'gauge', '', 'The maximum recorded event loop delay.'],
  ['hive_bash_nodejs_eventloop_lag_mean_seconds', 'gauge', '', 'The mean of the recorded event loop delays.'],
  [
    'hive_bash_nodejs_eventloop_lag_stddev_seconds',
    'gauge',
    '',
    'The standard deviation of the recorded event loop delays.',
  ],
  ['hive_bash_nodejs_eventloop_lag_p50_seconds', 'gauge', '', 'The 50th percentile of the recorded event loop delays.'],
  ['hive_bash_nodejs_eventloop_lag_p90_seconds', 'gauge', '', 'The 90th percentile of the recorded event loop delays.'],
  ['hive_bash_nodejs_eventloop_lag_p99_seconds', 'gauge', '', 'The 99th percentile of the recorded event loop delays.'],
  [
    'hive_bash_nodejs_active_resources',
    'gauge',
    'type',
    'Number of active resources that are currently keeping the event loop alive, grouped by async resource type.',
  ],
  [
    'hive_bash_nodejs_active_handles',
    'gauge',
    'type',
    'Number of active libuv handles grouped by handle type. Every handle type is C++ class name.',
  ],
  [
    'hive_bash_nodejs_active_requests',
    'gauge',
    'type',
    'Number of active libuv requests grouped by request type. Every request type is C++ class name.',
  ],
  ['hive_bash_nodejs_heap_size_total_bytes', 'gauge', '', 'Process heap size from Node.js in bytes.'],
  ['hive_bash_nodejs_heap_size_used_bytes', 'gauge', '', 'Process heap size used from Node.js in bytes.'],
  ['hive_bash_nodejs_external_memory_bytes', 'gauge', '', 'Node.js external memory size in bytes.'],
  [
    'hive_bash_nodejs_heap_space_size_total_bytes',
    'gauge',
    'space',
    'Process heap space size total from Node.js in bytes.',
  ],
  [
    'hive_bash_nodejs_heap_space_size_used_bytes',
    'gauge',
    'space',
    'Process heap space size used from Node.js in bytes.',
  ],
  [
    'hive_bash_nodejs_heap_space_size_available_bytes',
    'gauge',
    'space',
    'Process heap space size available from Node.js in bytes.',
  ],
  ['hive_bash_nodejs_version_info', 'gauge', 'major,minor,patch,version', 'Node.js version info.'],
  [
    'hive_bash_nodejs_gc_duration_seconds',
    'histogram',
    'kind',
    'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
  ],
  ['hive_bash_tasks_started_total', 'counter', 'kind', 'Tasks whose leader started, by kind (pipe or pty)'],
  ['hive_bash_tasks_finished_total', 'counter', 'state', 'Tasks that reached a final state, by that state'],
  ['hive_bash_tasks_oom_killed_total', 'counter', '', "Tasks the kernel's OOM killer ended at their memory limit"],
  ['hive_bash_task_duration_seconds', 'histogram', '', 'From the start of a task to its end'],
  [
    'hive_bash_spawn_latency_seconds',
    'histogram',
    '',
    'From the run request to the leader running (queueing included)',
  ],
  ['hive_bash_kill_duration_seconds', 'histogram', '', 'From a kill to nothing of the task left'],
  [
    'hive_bash_output_bytes_total',
    'counter',
    'stream',
    'Bytes tasks wrote to their output streams (kept or past the cap)',
  ],
  ['hive_bash_output_truncated_total', 'counter', 'stream', 'Output streams cut at the cap (or by a failed write)'],
  ['hive_bash_mcp_request_duration_seconds', 'histogram', 'method', 'MCP HTTP requests, by JSON-RPC method'],
  ['hive_bash_tasks', 'gauge', 'state', 'Tasks now in each state'],
  [
    'hive_bash_oldest_task_age_seconds',
    'gauge',
    'state',
    'The oldest running task since its start, the oldest pending one since its run; 0: none',
  ],
  [
    'hive_bash_tasks_interrupted_at_start',
    'gauge',
    '',
    'Tasks this start of the daemon found unfinished and marked interrupted',
  ],
  ['hive_bash_state_dir_available_bytes', 'gauge', '', "Bytes free to the daemon on the state dir's file system"],
  ['hive_bash_state_dir_size_bytes', 'gauge', '', "The size of the state dir's file system"],
  [
    'hive_bash_state_dir_writable',
    'gauge',
    '',
    "1 while the state dir takes writes; 0 while the registry's are held in memory, or no inode is left for output files",
  ],
  ['hive_bash_outbox_depth', 'gauge', '', 'Todo operations not yet acknowledged by the harness'],
  ['hive_bash_harness_connected', 'gauge', '', '1 while the todo socket is connected'],
  ['hive_bash_harness_configured', 'gauge', '', '1 when a todo socket is configured (--agent-socket)'],
  [
    'hive_bash_child_processes',
    'gauge',
    'state',
    "The daemon's own child processes (spawners, the tasks' init), live or zombie",
  ],
  ['hive_bash_build_info', 'gauge', 'containment,node_version,version', 'The daemon build, as labels; always 1'],
];

interface Family {
  type: string;
  help: string;
  /** The label names its samples carry (`le` left out); empty for one without samples yet. */
  labels: Set<string>;
  samples: number;
}

/** The families of a scrape by name: each sample counts for the family whose HELP came last. */
function familiesOf(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  let current: Family | undefined;
  for (const line of text.split('\n')) {
    const help = /^# HELP (\S+) (.*)$/.exec(line);
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (help) families.set(help[1]!, (current = { type: '', help: help[2]!, labels: new Set(), samples: 0 }));
    else if (type) families.get(type[1]!)!.type = type[2]!;
    else if (line !== '') {
      current!.samples += 1;
      for (const pair of /\{(.*)\}/.exec(line)?.[1]?.matchAll(/([a-zA-Z_]\w*)="/g) ?? [])
        if (pair[1] !== 'le') current!.labels.add(pair[1]!);
    }
  }
  return families;
}

test("/metrics serves the contract's families: each name, type, help and label names", async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const sleeper = await tools.ok('run', { command: 'sleep 300', wait_seconds: 0 });
  await tools.ok('kill', { id: sleeper.id, force: true });
  await tools.ok('run', { command: 'echo so that the task histograms have samples', wait_seconds: 30 });
  const families = familiesOf(await (await fetch(`${daemon.origin}/metrics`)).text());

  const served = [...families].map(([name, family]) => [name, family.type, family.help]).sort();
  const contracted = CONTRACT.map(([name, type, , help]) => [name, type, help]).sort();
  assert.deepEqual(served, contracted);
  let withSamples = 0;
  for (const [name, , labels] of CONTRACT) {
    const family = families.get(name)!;
    if (family.samples === 0) continue; // a labelled family before its first value (no GC yet, say)
    withSamples += 1;
    assert.equal([...family.labels].sort().join(','), labels, `${name}'s label names`);
  }
  assert.ok(withSamples >= CONTRACT.length - 3, `${withSamples} of ${CONTRACT.length} families had samples`);
});
