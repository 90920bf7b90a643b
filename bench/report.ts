/** The results table: p50/p99 per class per engine, the whole mix, and ratios to the first engine. */
import { percentile } from './measure.ts';

export interface ClassTimes {
  cls: string;
  queries: number;
  /** engine -> every timed run of the class, ascending, in ms. */
  times: Map<string, Float64Array>;
}

export interface Row {
  cls: string;
  queries: number;
  p50: Map<string, number>;
  p99: Map<string, number>;
}

export function summarise(classes: readonly ClassTimes[]): Row[] {
  return classes.map(({ cls, queries, times }) => {
    const p50 = new Map<string, number>(),
      p99 = new Map<string, number>();
    for (const [engine, t] of times) {
      p50.set(engine, percentile(t, 50));
      p99.set(engine, percentile(t, 99));
    }
    return { cls, queries, p50, p99 };
  });
}

const ms = (v: number | undefined): string =>
  v === undefined || Number.isNaN(v) ? '-' : v < 1 ? v.toFixed(3) : v < 100 ? v.toFixed(2) : v.toFixed(0);
const ratio = (a: number | undefined, b: number | undefined): string =>
  a === undefined || b === undefined || Number.isNaN(a) || Number.isNaN(b) || b === 0 ? '-' : `${(a / b).toFixed(a / b < 10 ? 2 : 1)}x`;

/** A markdown table: times in ms; each other engine's time over the first engine's. */
export function formatTable(rows: readonly Row[], engines: readonly string[]): string {
  const base = engines[0];
  const others = engines.slice(1);
  const head = ['class', 'queries'];
  for (const e of engines) head.push(`${e} p50`, `${e} p99`);
  for (const e of others) head.push(`${e}/${base} p50`, `${e}/${base} p99`);
  const lines = [head];
  for (const r of rows) {
    const line = [r.cls, String(r.queries)];
    for (const e of engines) line.push(ms(r.p50.get(e)), ms(r.p99.get(e)));
    for (const e of others) line.push(ratio(r.p50.get(e), r.p50.get(base)), ratio(r.p99.get(e), r.p99.get(base)));
    lines.push(line);
  }
  const width = head.map((_, k) => Math.max(...lines.map((l) => l[k].length)));
  const fmt = (l: string[]) => `| ${l.map((c, k) => (k < 1 ? c.padEnd(width[k]) : c.padStart(width[k]))).join(' | ')} |`;
  return [
    fmt(lines[0]),
    `|${width.map((w, k) => (k < 1 ? ':' : '') + '-'.repeat(w + 1) + (k < 1 ? '' : ':')).join('|')}|`,
    ...lines.slice(1).map(fmt),
  ].join('\n');
}

/** One line per query: its class, shape and median time, slowest first (where an engine's time goes). */
export function slowest(
  queries: readonly import('./engine.ts').MixQuery[],
  passes: readonly Float64Array[],
  answers: readonly (import('./engine.ts').Answer | Error)[],
  k: number,
): string[] {
  const median = queries.map((_, i) => {
    const t = passes
      .map((p) => p[i])
      .filter((v) => !Number.isNaN(v))
      .sort((a, b) => a - b);
    return t.length ? t[(t.length - 1) >> 1] : NaN;
  });
  const order = queries
    .map((_, i) => i)
    .filter((i) => !Number.isNaN(median[i]))
    .sort((a, b) => median[b] - median[a])
    .slice(0, k);
  return order.map((i) => {
    const m = queries[i];
    const a = answers[i];
    let shape: string;
    if (m.kind === 'point') shape = `radius ${m.q.radiusM} m, limit ${m.q.limit}`;
    else {
      const { bbox, sort, limit, offset, ...filters } = m.q;
      const side = `${(bbox.maxLon - bbox.minLon).toPrecision(2)}x${(bbox.maxLat - bbox.minLat).toPrecision(2)} deg`;
      const names = Object.keys(filters).filter((f) => f !== 'registeredBusinessTurnoverCurrency');
      shape = `${side}, sort ${sort}, limit ${limit} offset ${offset}, filters [${names.join(', ')}]`;
    }
    const total =
      a instanceof Error ? 'refused' : a.total !== undefined ? `total ${a.total}${a.capped ? '+' : ''}` : `${a.ids.length} rows`;
    return `${ms(median[i])} ms  #${i} ${m.cls}: ${shape}; ${total}`;
  });
}

/** The largest p99 of `engine` over `rows` and its row (NaN when it has none): the slowest class. */
export function slowestP99(rows: readonly Row[], engine: string): { ms: number; cls: string } {
  let ms = NaN;
  let cls = '';
  for (const r of rows) {
    const v = r.p99.get(engine);
    if (v !== undefined && !(v <= ms)) {
      ms = v;
      cls = r.cls;
    }
  }
  return { ms, cls };
}

/**
 * `engine`'s p99 over `base`'s, per row, and their geometric mean (every class weighs the same
 * whatever its times) and least (the class where `base` is least ahead). NaN when a row lacks either.
 */
export function p99Ratios(rows: readonly Row[], engine: string, base: string): { geomean: number; least: number; leastCls: string } {
  let logSum = 0;
  let least = Infinity;
  let leastCls = '';
  for (const r of rows) {
    const ratio = (r.p99.get(engine) ?? NaN) / (r.p99.get(base) ?? NaN);
    if (!(ratio > 0) || !Number.isFinite(ratio)) return { geomean: NaN, least: NaN, leastCls: '' };
    logSum += Math.log(ratio);
    if (ratio < least) {
      least = ratio;
      leastCls = r.cls;
    }
  }
  return rows.length ? { geomean: Math.exp(logSum / rows.length), least, leastCls } : { geomean: NaN, least: NaN, leastCls: '' };
}
