// The benchmarks keep working: `npm run bench -- --quick` runs each one small, and each must
// finish and report its figures. Nothing here judges a figure (these machines are shared).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const RUNNER = fileURLToPath(new URL('../../bench/run.js', import.meta.url));
const RESULTS = fileURLToPath(new URL('../../../bench/results/latest-quick.json', import.meta.url));

test('every benchmark runs in quick mode and reports its figures', () => {
  const run = spawnSync(process.execPath, [RUNNER, '--quick'], { encoding: 'utf8', timeout: 5 * 60_000 });
  assert.equal(run.status, 0, `bench --quick failed:\n${run.stdout}\n${run.stderr}`);
  const report = JSON.parse(readFileSync(RESULTS, 'utf8'));
  assert.equal(report.quick, true);
  assert.deepEqual(
    report.results.map((result: { name: string }) => result.name),
    [
      'short-tasks',
      'spawn-heap',
      'status-rate',
      'list-size',
      'kill-storm',
      'output-rate',
      'running-rss',
      'status-under-flood',
      'registry-size',
      'mcp-modes',
      'todo-latency',
      'output-grep',
      'screen-cost',
      'exec-policy',
    ],
  );
  for (const result of report.results) {
    assert.equal(result.ok, true, result.name);
    assert.equal(typeof result.figures, 'object', result.name);
    assert.ok(result.figures.benchmark, `${result.name} names itself in its figures`);
  }
});
