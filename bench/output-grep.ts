// output with grep over one task's 1 GiB of output (one error line in its middle) against
// `grep -n` on the same file, alternated over rounds in this run, the file in the page cache for
// both. Two patterns: a word (output searches the bytes for it) and an expression with no literal
// of 3 characters (irregexp searches the decoded text). Prints MB/s of each and each round's ratio.
// Usage: node dist/bench/output-grep.js [--mib N] [--rounds N]
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { alternateRounds, connectClients, roundRatios, secondsSince, spreadOf, startBenchDaemon } from './lib.js';

const { values } = parseArgs({
  options: { mib: { type: 'string', default: '1024' }, rounds: { type: 'string', default: '5' } },
});
const MIB = Number(values.mib);
const ROUNDS = Number(values.rounds);
/** One line of a build log: 68 bytes with its number, about 15.8 million lines a GiB. */
const LINE = '2026-12-01 12:00:00 INFO building module %d of the project, all fine';
const PATTERNS = [
  { name: 'word', output: 'ERROR', grep: ['-n', 'ERROR'] },
  { name: 'expression', output: '^E[A-Z]+ b', grep: ['-n', '-E', '^E[A-Z]+ b'] },
];

/** Runs a task that writes about `mib` MiB of log lines with one ERROR line in the middle; returns its id, file and the error's line. */
async function writeLog(client: Client): Promise<{ id: string; path: string; bytes: number; errorLine: number }> {
  const lines = Math.round((MIB * 2 ** 20) / 68);
  const middle = Math.floor(lines / 2);
  const command = `awk 'BEGIN { for (i = 1; i <= ${lines}; i++) { if (i == ${middle}) print "ERROR boom in module " i; else printf "${LINE}\\n", i } }'`;
  let result = await client.callTool({
    name: 'run',
    arguments: { command, name: 'log', wait_seconds: 30, verbose: true },
  });
  let task = result.structuredContent as { id: string; state: string; stdout_path: string; stdout_bytes: number };
  while (task.state === 'running') {
    result = await client.callTool({
      name: 'status',
      arguments: { id: task.id, wait_seconds: 30, tail_bytes: 0, verbose: true },
    });
    task = result.structuredContent as typeof task;
  }
  if (task.state !== 'done') throw new Error(`the log task ended ${task.state}: ${JSON.stringify(task).slice(0, 300)}`);
  return { id: task.id, path: task.stdout_path, bytes: task.stdout_bytes, errorLine: middle };
}

const daemon = await startBenchDaemon(['--max-output-bytes', '0']);
const results: Array<Record<string, unknown>> = [];
try {
  const [client] = await connectClients(daemon.url, 1);
  const log = await writeLog(client!);
  const expected = `${log.errorLine}:ERROR boom in module ${log.errorLine}`;
  execFileSync('cat', [log.path], { stdio: ['ignore', 'ignore', 'ignore'] }); // into the page cache
  for (const pattern of PATTERNS) {
    const sides = {
      'grep -n': () => {
        const start = process.hrtime.bigint();
        const found = execFileSync('grep', [...pattern.grep, log.path], { encoding: 'utf8' }).trim();
        const seconds = secondsSince(start);
        if (found !== expected) throw new Error(`grep found ${JSON.stringify(found)}`);
        return log.bytes / 1e6 / seconds;
      },
      output: async () => {
        const start = process.hrtime.bigint();
        const result = await client!.callTool({
          name: 'output',
          arguments: { id: log.id, stream: 'stdout', grep: pattern.output },
        });
        const seconds = secondsSince(start);
        const text = (result.structuredContent as { stdout: { text: string } }).stdout.text.trim();
        if (text !== expected)
          throw new Error(`output found ${JSON.stringify(text)}: ${JSON.stringify(result).slice(0, 300)}`);
        return log.bytes / 1e6 / seconds;
      },
    };
    await sides.output(); // warm-up: the daemon's first grep compiles its paths
    const rounds = await alternateRounds(ROUNDS, sides);
    const ratio = roundRatios(rounds.output!, rounds['grep -n']!);
    results.push({
      pattern: pattern.name,
      output_mb_per_s: spreadOf(rounds.output!).median,
      grep_mb_per_s: spreadOf(rounds['grep -n']!).median,
      ratio: ratio.median,
      ratio_min: ratio.min,
      ratio_max: ratio.max,
    });
  }
  await client!.close();
  console.table(results);
  console.log(
    JSON.stringify({
      benchmark: 'output-grep',
      goal: 'ratio >= 0.5 (the word)',
      mib: Math.round(log.bytes / 2 ** 20),
      rounds: ROUNDS,
      rows: results,
    }),
  );
} finally {
  await daemon.stop();
}
