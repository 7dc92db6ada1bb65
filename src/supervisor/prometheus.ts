// The Prometheus text format (version 0.0.4), for the few kinds of metric the daemon serves:
// counters, gauges and histograms, each with or without labels, read at a scrape or kept as they
// move. Written here rather than taken from prom-client, which loaded `cluster`, `https`, `tls` and
// @opentelemetry/api with it: an idle daemon holds 1.3 MB less without it on Node 20, 3.3 MB less on
// Node 24 (bench/README.md, issue 25's eleventh sitting).

export type Labels = Readonly<Record<string, string>>;

interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  /** Its sample lines, each `name{labels} value`. */
  samples(): string[];
}

/** What every metric is made with: its name, its help, the registry it is served from. */
export interface MetricOptions {
  name: string;
  help: string;
  registry: Registry;
  /** Its values come with labels, so it has no sample until the first (else one, from 0). */
  labelled?: boolean;
}

/** A maker of options for `registry`'s metrics whose names all start with `prefix`. */
export const namedIn =
  (registry: Registry, prefix: string) =>
  (name: string, help: string, labelled = false): MetricOptions => ({
    name: `${prefix}${name}`,
    help,
    registry,
    labelled,
  });

export interface HistogramOptions extends MetricOptions {
  /** The buckets' upper bounds, rising (+Inf is added). */
  buckets: readonly number[];
}

export class Registry {
  readonly contentType = 'text/plain; version=0.0.4; charset=utf-8';
  private readonly families: Family[] = [];
  private readonly beforeScrape: Array<() => void> = [];

  add(family: Family): void {
    if (this.families.some((each) => each.name === family.name))
      throw new Error(`metric ${family.name} is registered twice`);
    this.families.push(family);
  }

  /** Runs before every scrape: where values read from elsewhere are brought up to date. */
  onScrape(collect: () => void): void {
    this.beforeScrape.push(collect);
  }

  metrics(): string {
    for (const collect of this.beforeScrape) collect();
    const lines: string[] = [];
    for (const family of this.families) {
      lines.push(`# HELP ${family.name} ${family.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      lines.push(`# TYPE ${family.name} ${family.type}`);
      lines.push(...family.samples());
    }
    return `${lines.join('\n')}\n`;
  }
}

/** `{a="x",b="y"}`, or nothing without labels; values escaped as the format asks. */
function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(
    ([key, value]) => `${key}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

function valueText(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** One value per set of labels (none: one value), in the order first set. */
class Values {
  private readonly byKey = new Map<string, { labels: Labels; value: number }>();

  constructor(labelled: boolean | undefined) {
    if (!labelled) this.set({}, 0);
  }

  add(labels: Labels, delta: number): void {
    this.entry(labels).value += delta;
  }

  set(labels: Labels, value: number): void {
    this.entry(labels).value = value;
  }

  lines(name: string): string[] {
    return [...this.byKey.values()].map(({ labels, value }) => `${name}${labelText(labels)} ${valueText(value)}`);
  }

  private entry(labels: Labels) {
    const key = labelText(labels);
    let entry = this.byKey.get(key);
    if (entry === undefined) this.byKey.set(key, (entry = { labels, value: 0 }));
    return entry;
  }
}

/** A metric with one value per set of labels. */
abstract class ValueFamily implements Family {
  abstract readonly type: 'counter' | 'gauge';
  readonly name: string;
  readonly help: string;
  protected values: Values;

  constructor(protected readonly options: MetricOptions) {
    this.name = options.name;
    this.help = options.help;
    this.values = new Values(options.labelled);
    options.registry.add(this);
  }

  /** Its value (a counter's from a source that counts it, read at a scrape). */
  set(labels: Labels, value: number): void {
    this.values.set(labels, value);
  }

  samples(): string[] {
    return this.values.lines(this.name);
  }
}

/** A count that only rises (or, where its source is read at each scrape, is set to it). */
export class Counter extends ValueFamily {
  readonly type = 'counter';

  inc(labels: Labels = {}, by = 1): void {
    if (!(by >= 0)) throw new RangeError(`counter ${this.name} cannot move by ${by}`);
    this.values.add(labels, by);
  }
}

/** A value that goes up and down. */
export class Gauge extends ValueFamily {
  readonly type = 'gauge';

  /** Forgets every set of labels (for a gauge whose labels come and go, set afresh at each scrape). */
  clear(): void {
    this.values = new Values(this.options.labelled);
  }
}

interface Buckets {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
}

/** Observations counted into buckets by their upper bounds, with their sum and count. */
export class Histogram implements Family {
  readonly type = 'histogram';
  readonly name: string;
  readonly help: string;
  private readonly byKey = new Map<string, Buckets>();
  private readonly bounds: readonly number[];

  constructor(options: HistogramOptions) {
    this.name = options.name;
    this.help = options.help;
    this.bounds = options.buckets;
    if (!options.labelled) this.buckets({});
    options.registry.add(this);
  }

  observe(labels: Labels, value: number): void {
    const buckets = this.buckets(labels);
    const index = this.bounds.findIndex((bound) => value <= bound);
    if (index >= 0) buckets.counts[index]! += 1;
    buckets.sum += value;
    buckets.count += 1;
  }

  /** Starts a timer; the function returned observes the seconds since, with its labels. */
  startTimer(): (labels?: Labels) => void {
    const start = process.hrtime.bigint();
    return (labels = {}) => this.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
  }

  samples(): string[] {
    const lines: string[] = [];
    for (const { labels, counts, sum, count } of this.byKey.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, index) => {
        cumulative += counts[index]!;
        lines.push(`${this.name}_bucket${labelText({ ...labels, le: valueText(bound) })} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: '+Inf' })} ${count}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${valueText(sum)}`);
      lines.push(`${this.name}_count${labelText(labels)} ${count}`);
    }
    return lines;
  }

  private buckets(labels: Labels): Buckets {
    const key = labelText(labels);
    let buckets = this.byKey.get(key);
    if (buckets === undefined)
      this.byKey.set(key, (buckets = { labels, counts: this.bounds.map(() => 0), sum: 0, count: 0 }));
    return buckets;
  }
}
