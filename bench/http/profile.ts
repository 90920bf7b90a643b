/**
 * Top self-time functions of V8 CPU profiles (`node --cpu-prof`): each sample's time goes to
 * the function on top of the stack; functions are keyed by name and source position, summed over
 * every profile given (one per thread of the server). `(idle)` is time the thread waited.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

interface CpuProfile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  fn: string;
  where: string;
  ms: number;
}

/**
 * The function's file, relative to the checkout (a dependency from node_modules/ on). No line:
 * tsx compiles the sources on the fly, and the profile's positions are those of its output.
 */
function where(url: string, root: string): string {
  if (!url.startsWith('file://')) return url;
  let path: string;
  try {
    path = fileURLToPath(url);
  } catch {
    return url;
  }
  const nm = path.lastIndexOf('/node_modules/');
  return nm >= 0 ? path.slice(nm + 1) : relative(root, path);
}

/**
 * A window of the monotonic clock (process.hrtime, µs), which V8 profiles' timestamps also use
 * on Linux: only samples inside it count, so a server's start-up stays out of its profile.
 */
export interface Window {
  fromUs: number;
  toUs: number;
}

/** Self time per function over the profiles, largest first; `busyMs` leaves out (idle). */
export function selfTimes(files: readonly string[], root: string, window?: Window): { rows: SelfTime[]; totalMs: number; busyMs: number } {
  const byKey = new Map<string, SelfTime>();
  let totalMs = 0;
  for (const file of files) {
    const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const nodes = new Map<number, ProfileNode>();
    for (const n of p.nodes) nodes.set(n.id, n);
    const self = new Map<number, number>();
    let t = p.startTime;
    // timeDeltas[i] leads to sample i; timeDeltas[i + 1] is the time sample i stood for.
    for (let i = 0; i < p.samples.length; i++) {
      t += p.timeDeltas[i] ?? 0;
      if (window && (t < window.fromUs || t > window.toUs)) continue;
      const us = p.timeDeltas[i + 1] ?? 0;
      self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + us);
    }
    for (const [id, us] of self) {
      const n = nodes.get(id)!;
      const fn = n.callFrame.functionName || '(anonymous)';
      const at = where(n.callFrame.url, root);
      const key = `${fn}\u0000${at}`;
      const row = byKey.get(key) ?? { fn, where: at, ms: 0 };
      row.ms += us / 1000;
      byKey.set(key, row);
      totalMs += us / 1000;
    }
  }
  const rows = [...byKey.values()].sort((a, b) => b.ms - a.ms);
  const idle = rows.filter((r) => r.fn === '(idle)').reduce((s, r) => s + r.ms, 0);
  return { rows, totalMs, busyMs: totalMs - idle };
}

/**
 * A markdown table of the top `n` functions by self time, as shares of busy time (idle left
 * out: a server thread waiting for requests, or tsx's module-loader thread, is not work).
 */
export function formatProfile(files: readonly string[], root: string, n: number, window?: Window): string {
  let { rows, totalMs, busyMs } = selfTimes(files, root, window);
  let note = window ? 'the loaded period only' : 'the whole process life';
  if (window && totalMs === 0) {
    // The clocks did not match after all: better the whole profile than none.
    ({ rows, totalMs, busyMs } = selfTimes(files, root));
    note = 'the whole process life, start-up included (no sample fell in the loaded period: clock mismatch)';
  }
  const lines = [
    `${files.length} profile${files.length === 1 ? '' : 's'} (one per thread), ${(totalMs / 1000).toFixed(1)} s sampled over ${note}, ` +
      `${(busyMs / 1000).toFixed(1)} s busy (not idle)`,
    '',
    '| # | self ms | % of busy | function | file |',
    '|--:|--------:|----------:|:---------|:-----|',
  ];
  rows
    .filter((r) => r.fn !== '(idle)')
    .slice(0, n)
    .forEach((r, i) => {
      lines.push(`| ${i + 1} | ${r.ms.toFixed(0)} | ${((100 * r.ms) / busyMs).toFixed(1)} | ${r.fn} | ${r.where} |`);
    });
  return lines.join('\n');
}
