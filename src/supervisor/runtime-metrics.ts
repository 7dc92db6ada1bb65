// The daemon process's own metrics: its CPU, memory and file descriptors, and Node's event loop,
// handles, heap and collections. The names, help and meaning of prom-client's default metrics (which
// the daemon served until it wrote its own exposition, ./prometheus.ts), so that dashboards built
// on them keep working; read at each scrape, but for the event loop's delay (sampled every 100 ms:
// prom-client's default of 10 ms kept an idle daemon's main thread waking 100 times a second) and
// the collections (counted as they end).
import { readdirSync, readFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { Counter, Gauge, Histogram, namedIn, type Registry } from './prometheus.js';

/** How often the event loop's delay is sampled, in ms. */
const EVENT_LOOP_RESOLUTION_MS = 100;
const GC_DURATION_BUCKETS_S = [0.001, 0.01, 0.1, 1, 2, 5];
const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** Undocumented, as prom-client reads them: libuv's handles and requests, as objects. */
const internals = process as unknown as { _getActiveHandles(): object[]; _getActiveRequests(): object[] };

/** Counts of each value (or each object's class; one without is left out), for a gauge labelled by type. */
function countByType(items: ReadonlyArray<string | object>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) {
    const type = typeof item === 'string' ? item : (item as { constructor?: { name: string } }).constructor?.name;
    if (type !== undefined) counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts;
}

/** Reads kB fields of /proc/self/status, in bytes. */
function statusBytes(fields: readonly string[]): number[] {
  const status = readFileSync('/proc/self/status', 'utf8');
  return fields.map((field) => Number(new RegExp(`^${field}:\\s*(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN) * 1024);
}

function maxOpenFiles(): number {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((each) => each.startsWith('Max open files'));
  return Number(line?.split(/ {2,}/)[1] ?? NaN);
}

/** Registers the process's and Node's metrics under `prefix`, sampled for the rest of the process's life. */
export function registerRuntimeMetrics(registry: Registry, prefix: string): void {
  const named = namedIn(registry, prefix);
  const gauge = (name: string, help: string, labelled = false) => new Gauge(named(name, help, labelled));
  const counter = (name: string, help: string) => new Counter(named(name, help));

  const cpuUser = counter('process_cpu_user_seconds_total', 'Total user CPU time spent in seconds.');
  const cpuSystem = counter('process_cpu_system_seconds_total', 'Total system CPU time spent in seconds.');
  const cpu = counter('process_cpu_seconds_total', 'Total user and system CPU time spent in seconds.');
  const started = gauge('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.');
  const resident = gauge('process_resident_memory_bytes', 'Resident memory size in bytes.');
  const virtual = gauge('process_virtual_memory_bytes', 'Virtual memory size in bytes.');
  const data = gauge('process_heap_bytes', 'Process heap size in bytes.');
  const openFds = gauge('process_open_fds', 'Number of open file descriptors.');
  const maxFds = gauge('process_max_fds', 'Maximum number of open file descriptors.');
  const lag = gauge('nodejs_eventloop_lag_seconds', 'Lag of event loop in seconds.');
  const delays = [
    ['min', 'The minimum recorded event loop delay.'],
    ['max', 'The maximum recorded event loop delay.'],
    ['mean', 'The mean of the recorded event loop delays.'],
    ['stddev', 'The standard deviation of the recorded event loop delays.'],
    ['p50', 'The 50th percentile of the recorded event loop delays.'],
    ['p90', 'The 90th percentile of the recorded event loop delays.'],
    ['p99', 'The 99th percentile of the recorded event loop delays.'],
  ].map(([stat, help]) => ({ stat: stat!, gauge: gauge(`nodejs_eventloop_lag_${stat}_seconds`, help!) }));
  // prom-client's `..._total` gauges of these counts are left out: a `_total` gauge breaks the
  // naming rules (`promtool check metrics`), and sum() over the types gives the same figure.
  const byType = (name: string, help: string, read: () => ReadonlyArray<string | object>) => {
    const each = gauge(name, help, true);
    return () => {
      each.clear();
      for (const [type, count] of countByType(read())) each.set({ type }, count);
    };
  };
  const resources = byType(
    'nodejs_active_resources',
    'Number of active resources that are currently keeping the event loop alive, grouped by async resource type.',
    () => process.getActiveResourcesInfo(),
  );
  const handles = byType(
    'nodejs_active_handles',
    'Number of active libuv handles grouped by handle type. Every handle type is C++ class name.',
    () => internals._getActiveHandles(),
  );
  const requests = byType(
    'nodejs_active_requests',
    'Number of active libuv requests grouped by request type. Every request type is C++ class name.',
    () => internals._getActiveRequests(),
  );
  const heapTotal = gauge('nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.');
  const heapUsed = gauge('nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.');
  const external = gauge('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.');
  const spaces = (['total', 'used', 'available'] as const).map((kind) =>
    gauge(`nodejs_heap_space_size_${kind}_bytes`, `Process heap space size ${kind} from Node.js in bytes.`, true),
  );
  const version = gauge('nodejs_version_info', 'Node.js version info.', true);
  const gcDuration = new Histogram({
    ...named(
      'nodejs_gc_duration_seconds',
      'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
      true,
    ),
    buckets: GC_DURATION_BUCKETS_S,
  });

  const [major, minor, patch] = process.versions.node.split('.');
  version.set({ version: process.version, major: major!, minor: minor!, patch: patch! }, 1);
  started.set({}, Math.round(Date.now() / 1000 - process.uptime()));
  const delay = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  delay.enable();
  const collections = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { detail } = entry as unknown as { detail?: { kind?: number } };
      const kind = GC_KINDS[detail?.kind ?? -1] ?? 'other';
      gcDuration.observe({ kind }, entry.duration / 1000);
    }
  });
  collections.observe({ entryTypes: ['gc'] });
  let lastCpu = process.cpuUsage();

  registry.onScrape(() => {
    const now = process.cpuUsage();
    const user = (now.user - lastCpu.user) / 1e6;
    const system = (now.system - lastCpu.system) / 1e6;
    lastCpu = now;
    cpuUser.inc({}, user);
    cpuSystem.inc({}, system);
    cpu.inc({}, user + system);
    const [rss, size, vmData] = statusBytes(['VmRSS', 'VmSize', 'VmData']);
    resident.set({}, rss!);
    virtual.set({}, size!);
    data.set({}, vmData!);
    openFds.set({}, readdirSync('/proc/self/fd').length - 1); // less the one the read itself opened
    maxFds.set({}, maxOpenFiles());
    // As prom-client: the delay of a callback queued now, set when it runs (so seen at the next scrape).
    const queued = process.hrtime.bigint();
    setImmediate(() => lag.set({}, Number(process.hrtime.bigint() - queued) / 1e9));
    for (const { stat, gauge: each } of delays) {
      const nanoseconds = stat.startsWith('p')
        ? delay.percentile(Number(stat.slice(1)))
        : delay[stat as 'min' | 'max' | 'mean' | 'stddev'];
      each.set({}, nanoseconds / 1e9);
    }
    delay.reset();
    resources();
    handles();
    requests();
    const memory = process.memoryUsage();
    heapTotal.set({}, memory.heapTotal);
    heapUsed.set({}, memory.heapUsed);
    external.set({}, memory.external);
    for (const space of getHeapSpaceStatistics()) {
      const name = space.space_name.replace(/_space$/, '');
      const values = [space.space_size, space.space_used_size, space.space_available_size];
      spaces.forEach((each, index) => each.set({ space: name }, values[index]!));
    }
  });
}
