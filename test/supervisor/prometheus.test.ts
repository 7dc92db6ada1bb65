// The Prometheus text format the daemon writes itself (src/supervisor/prometheus.ts): every family
// with its HELP and TYPE, label values and help escaped, histograms' buckets cumulative with +Inf,
// sum and count, values read at the scrape, and the mistakes refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Gauge, Histogram, Registry } from '../../src/supervisor/prometheus.js';

test('counters, gauges and histograms are written in the text format, escaped, with cumulative buckets', () => {
  const registry = new Registry();
  const calls = new Counter({
    name: 'x_calls_total',
    help: 'Calls, by "kind"\nand more \\ so',
    registry,
    labelled: true,
  });
  new Counter({ name: 'x_plain_total', help: 'Plain', registry });
  const level = new Gauge({ name: 'x_level', help: 'Level', registry, labelled: true });
  const took = new Histogram({ name: 'x_seconds', help: 'Took', registry, buckets: [0.1, 1] });
  calls.inc({ kind: 'a "quoted"\nline \\ here' });
  calls.inc({ kind: 'b' }, 2.5);
  calls.inc({ kind: 'b' });
  for (const seconds of [0.05, 0.1, 0.5, 3]) took.observe({}, seconds);
  let scrapes = 0;
  registry.onScrape(() => level.set({ at: 'scrape' }, ++scrapes));
  assert.equal(
    registry.metrics(),
    [
      '# HELP x_calls_total Calls, by "kind"\\nand more \\\\ so',
      '# TYPE x_calls_total counter',
      'x_calls_total{kind="a \\"quoted\\"\\nline \\\\ here"} 1',
      'x_calls_total{kind="b"} 3.5',
      '# HELP x_plain_total Plain',
      '# TYPE x_plain_total counter',
      'x_plain_total 0',
      '# HELP x_level Level',
      '# TYPE x_level gauge',
      'x_level{at="scrape"} 1',
      '# HELP x_seconds Took',
      '# TYPE x_seconds histogram',
      'x_seconds_bucket{le="0.1"} 2',
      'x_seconds_bucket{le="1"} 3',
      'x_seconds_bucket{le="+Inf"} 4',
      'x_seconds_sum 3.65',
      'x_seconds_count 4',
      '',
    ].join('\n'),
  );
  assert.match(registry.metrics(), /^x_level\{at="scrape"\} 2$/m, 'values read at each scrape');
  assert.equal(registry.contentType, 'text/plain; version=0.0.4; charset=utf-8');
});

test('a gauge cleared forgets its labels; special values are written as the format spells them', () => {
  const registry = new Registry();
  const gauge = new Gauge({ name: 'y', help: 'Y', registry, labelled: true });
  gauge.set({ type: 'gone' }, 1);
  gauge.clear();
  gauge.set({ type: 'nan' }, NaN);
  gauge.set({ type: 'inf' }, Infinity);
  gauge.set({ type: 'minus' }, -Infinity);
  assert.deepEqual(registry.metrics().split('\n').slice(2, -1), [
    'y{type="nan"} NaN',
    'y{type="inf"} +Inf',
    'y{type="minus"} -Inf',
  ]);
});

test('a name registered twice and a counter moved down are refused', () => {
  const registry = new Registry();
  const counter = new Counter({ name: 'z_total', help: 'Z', registry });
  assert.throws(() => new Gauge({ name: 'z_total', help: 'again', registry }), /metric z_total is registered twice/);
  assert.throws(() => counter.inc({}, -1), /counter z_total cannot move by -1/);
  assert.throws(() => counter.inc({}, NaN), /counter z_total cannot move by NaN/);
});
