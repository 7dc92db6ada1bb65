// What output's screen costs a pty task: the daemon's heap and RSS with N tasks' terminals emulated
// against before any was, the CPU of each task's first screen (its emulator made and fed its whole
// output) and of a second (only what came since: nothing), and the emulator's feed rate on a task
// that wrote a few MiB of coloured lines. Tasks that nobody asks the screen of cost nothing.
// The emulator's module is loaded at the first screen asked for; its cost is measured apart. A
// screen not drawn within one call's budget is asked again, as a client does (feed_calls).
// Usage: node dist/bench/screen-cost.js [--tasks N] [--feed-mib N]
import { parseArgs } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { readProcessCpu } from './cpu.js';
import { connectClients, rssMegabytes, secondsSince, startBenchDaemon } from './lib.js';

const { values } = parseArgs({
  options: { tasks: { type: 'string', default: '30' }, 'feed-mib': { type: 'string', default: '8' } },
});
const TASKS = Number(values.tasks);
const FEED_MIB = Number(values['feed-mib']);
/** A screenful of a full-screen program: clear, then 40 rows of coloured text placed by cursor moves. */
const SCREENFUL =
  "printf '\\033[?1049h\\033[2J'; for r in $(seq 1 40); do printf '\\033[%d;1H\\033[3%dmrow %d of a full-screen program, drawn in colour\\033[0m' $r $((r % 8)) $r; done";

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

/** Task `id`'s screen, asked again while a call's budget leaves it not drawn (as a client does); and the calls it took. */
async function screenOf(client: Client, id: string): Promise<{ screen: any; calls: number }> {
  for (let calls = 1; ; calls++) {
    const result = await client.callTool({ name: 'output', arguments: { id, screen: true } });
    const answer = result.structuredContent as any;
    if (!result.isError) return { screen: answer.screen, calls };
    if (answer?.error?.code !== 'ERR_SCREEN_TOO_COSTLY')
      throw new Error(`output failed: ${JSON.stringify(result.content)}`);
  }
}

/** The daemon's CPU seconds (all its threads), from /proc. */
const cpuOf = (pid: number) => readProcessCpu(pid).own;

const daemon = await startBenchDaemon(['--max-output-bytes', '0']);
try {
  const [client] = await connectClients(daemon.url, 1);
  const ids: string[] = [];
  for (let i = 0; i <= TASKS; i++)
    ids.push((await call(client!, 'run', { command: `${SCREENFUL}; sleep 600`, pty: true, wait_seconds: 0 })).id);
  for (const id of ids) {
    while ((await call(client!, 'status', { id })).stdout_bytes < 2000)
      await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  // The first screen loads the emulator's module: measured apart from the terminals'.
  const rssIdle = rssMegabytes(daemon.pid);
  const cpuIdle = cpuOf(daemon.pid);
  const warm = ids.shift()!;
  await screenOf(client!, warm);
  const moduleCpuMs = (cpuOf(daemon.pid) - cpuIdle) * 1000;
  const rssBefore = rssMegabytes(daemon.pid);
  const cpuBefore = cpuOf(daemon.pid);
  for (const id of ids) {
    const { screen } = await screenOf(client!, id);
    if (!screen.text.includes('row 40 of a full-screen program'))
      throw new Error(`the screen of ${id} is not drawn:\n${screen.text}`);
  }
  const firstCpuMs = ((cpuOf(daemon.pid) - cpuBefore) * 1000) / ids.length;
  const rssAfter = rssMegabytes(daemon.pid);
  const cpuAgain = cpuOf(daemon.pid);
  for (const id of ids) await screenOf(client!, id);
  const againCpuMs = ((cpuOf(daemon.pid) - cpuAgain) * 1000) / ids.length;

  // The feed rate: one task that wrote FEED_MIB MiB of coloured lines, its screen asked once.
  const lines = Math.round((FEED_MIB * 2 ** 20) / 60);
  const big = await call(client!, 'run', {
    command: `for i in $(seq 1 ${lines}); do printf '\\033[32mok\\033[0m line %d of a long coloured log\\n' $i; done`,
    pty: true,
    wait_seconds: 30,
    verbose: true,
  });
  let bytes = big.stdout_bytes;
  for (let view = big; view.state === 'running'; bytes = view.stdout_bytes)
    view = await call(client!, 'status', { id: big.id, wait_seconds: 30, tail_bytes: 0, verbose: true });
  const start = process.hrtime.bigint();
  const { calls: feedCalls } = await screenOf(client!, big.id);
  const feedMbPerS = bytes / 1e6 / secondsSince(start);

  for (const id of ids) await call(client!, 'kill', { id, force: true });
  await call(client!, 'kill', { id: warm, force: true });
  await client!.close();
  const row = {
    tasks: TASKS,
    rss_idle_mb: Math.round(rssIdle),
    module_rss_mb: Number((rssBefore - rssIdle).toFixed(1)),
    module_and_first_screen_cpu_ms: Math.round(moduleCpuMs),
    rss_before_mb: Math.round(rssBefore),
    rss_after_mb: Math.round(rssAfter),
    rss_per_terminal_kb: Math.round(((rssAfter - rssBefore) * 1024) / ids.length),
    first_screen_cpu_ms: Number(firstCpuMs.toFixed(1)),
    again_screen_cpu_ms: Number(againCpuMs.toFixed(1)),
    feed_mib: Number((bytes / 2 ** 20).toFixed(1)),
    feed_mb_per_s: Math.round(feedMbPerS),
    feed_calls: feedCalls,
  };
  console.table([row]);
  console.log(JSON.stringify({ benchmark: 'screen-cost', rows: [row] }));
} finally {
  await daemon.stop();
}
