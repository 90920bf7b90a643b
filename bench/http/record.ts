/**
 * A recording of Edifice's answers to the mix, for `bench/http/replay-server.ts`: the mix's
 * requests (same weights, seed and discovery as the runs) sent one at a time to a running
 * Edifice, walks followed, and every answer kept whole (status, headers, body) in order.
 * Written with `v8.serialize` so the bodies stay Buffers.
 */
import { writeFileSync } from 'node:fs';
import { serialize } from 'node:v8';
import { Mix, nextPath, KINDS, type Weights } from '../../tools/load/mix.ts';
import type { Discovery } from '../../tools/load/discover.ts';
import { effectiveWeights } from '../../tools/load/run.ts';
import type { Target } from '../../tools/load/target.ts';

export interface Recorded {
  status: number;
  /** Lower-case name and value, in the server's order; not the ones uWS writes itself. */
  headers: [string, string][];
  body: Buffer;
}

/** Written by uWS (or the connection), never replayed. */
const OWN_HEADERS = new Set(['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding', 'uwebsockets']);
const WALK = KINDS.indexOf('walk');

export interface RecordingSummary {
  answers: number;
  bytes: number;
  statuses: Record<string, number>;
}

/** Sends `count` requests of the mix to `target`, one at a time, and writes what came back to `file`. */
export async function recordMix(
  target: Target,
  keys: readonly string[],
  discovery: Discovery,
  weights: Weights,
  seed: number,
  count: number,
  file: string,
): Promise<RecordingSummary> {
  // A copy of the area: what the mix learns here must not change the runs' own mix.
  const area = structuredClone(discovery.area);
  const mix = new Mix(area, effectiveWeights(weights, discovery).weights, seed, 0, target.base);
  const answers: Recorded[] = [];
  const statuses: Record<string, number> = {};
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const req = mix.next();
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'edifice-bench-record' };
    if (req.auth) headers.authorization = `Bearer ${keys[i % keys.length]}`;
    // Public pages from many addresses, as the runs send them (the server trusts one proxy).
    else headers['x-forwarded-for'] = `10.9.${(i >> 8) & 255}.${i & 255}`;
    const res = await fetch(`http://${target.hostHeader}${req.path}`, { headers, signal: AbortSignal.timeout(30_000) });
    const body = Buffer.from(await res.arrayBuffer());
    const kept: [string, string][] = [];
    res.headers.forEach((value, name) => {
      if (!OWN_HEADERS.has(name)) kept.push([name, value]);
    });
    answers.push({ status: res.status, headers: kept, body });
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    bytes += body.length;
    if (req.kind === WALK) mix.walked(res.ok ? nextPath(body) : null);
  }
  writeFileSync(file, serialize(answers));
  return { answers: answers.length, bytes, statuses };
}
