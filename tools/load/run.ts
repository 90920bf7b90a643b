/**
 * A whole load run: discovery (unless one is given), then the load in worker threads, then the
 * merged report. The load runs off the main thread so that a caller on the main thread (a test
 * serving on it, a CLI printing progress) neither slows the load down nor is slowed by it; more
 * than one thread is for machines where one client thread cannot keep up with the server.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { discover, type BBox, type Discovery } from './discover.ts';
import type { EnginePlan, EngineResult } from './engine.ts';
import { KINDS, type Weights } from './mix.ts';
import { mergeReport, type LoadReport } from './report.ts';
import type { Target } from './target.ts';

export interface LoadOptions {
  target: Target;
  keys: string[];
  mode: 'max' | 'rate';
  /** Requests a second (rate mode). */
  rate: number | null;
  /** Max mode: connections kept busy. Rate mode: the most connections opened. */
  connections: number;
  durationS: number;
  /** The run also ends after this many requests. */
  requests: number;
  weights: Weights;
  seed: number;
  threads: number;
  timeoutMs: number;
  bbox: BBox | null;
  /** Public pages are spread over this many client addresses in X-Forwarded-For (0: none). */
  clientAddresses?: number;
  /** A discovery made before (the bench reuses one across servers); no probe is sent then. */
  discovery?: Discovery;
}

const WORKER = new URL('./worker.ts', import.meta.url).href;
// Worker threads do not inherit tsx's loader: the bootstrap registers it, then loads the TS entry.
// tsx's ESM entry, found from here (an eval'd worker resolves bare names from the working folder).
const TSX_API = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href.replace(/\/index\.cjs$/, '/index.mjs');
const BOOTSTRAP = `import(${JSON.stringify(TSX_API)})` + `.then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER)}); });`;

/** The public weight set to 0 when the server has no public pages (a warning says so). */
export function effectiveWeights(weights: Weights, d: Discovery): { weights: Weights; warnings: string[] } {
  if (d.publicAvailable || weights.public === 0) return { weights, warnings: [] };
  const w = { ...weights, public: 0 };
  if (KINDS.every((k) => w[k] === 0)) throw new Error('the mix holds only public pages, and the server answers them 404.');
  return {
    weights: w,
    warnings: [`the first public page answered 404: the server has no public endpoints; public weight set to 0 (was ${weights.public})`],
  };
}

function startThread(plan: EnginePlan): { ready: Promise<void>; go(): Promise<EngineResult>; stop(): Promise<number> } {
  const w = new Worker(BOOTSTRAP, { eval: true, workerData: plan });
  let failed: (err: Error) => void = () => {};
  const crashed = new Promise<never>((_, reject) => {
    failed = reject;
  });
  crashed.catch(() => {});
  w.on('error', (err) => failed(err));
  w.on('exit', (code) => failed(new Error(`load thread exited with code ${code} before reporting`)));
  const message = (type: string) =>
    Promise.race([
      crashed,
      new Promise<{ result?: EngineResult; message?: string }>((resolve) => {
        const on = (m: { type: string }) => {
          if (m.type === type || m.type === 'error') {
            w.off('message', on);
            resolve(m as { result?: EngineResult; message?: string });
          }
        };
        w.on('message', on);
      }),
    ]).then((m) => {
      if (m.message !== undefined) throw new Error(`load thread failed: ${m.message}`);
      return m;
    });
  return {
    ready: message('ready').then(() => {}),
    go: () => {
      const result = message('result');
      w.postMessage('go');
      return result.then((m) => m.result!);
    },
    stop: () => w.terminate(),
  };
}

export async function runLoad(o: LoadOptions, log: (msg: string) => void = () => {}): Promise<LoadReport> {
  let d = o.discovery;
  const discovered = !d;
  if (!d) {
    log(`discovery: probing ${o.target.url}`);
    d = await discover(o.target, o.keys, o.bbox);
    log(
      `discovery: ${d.requests} requests, ${d.buildings} buildings seen in ${d.cells} cells; public pages ${d.publicAvailable ? 'answer' : 'answer 404'}`,
    );
  }
  const { weights, warnings } = effectiveWeights(o.weights, d);
  const threads = Math.max(1, o.threads);
  const plans: EnginePlan[] = [];
  for (let t = 0; t < threads; t++) {
    const requests = Math.floor(o.requests / threads) + (t < o.requests % threads ? 1 : 0);
    plans.push({
      host: o.target.host,
      port: o.target.port,
      hostHeader: o.target.hostHeader,
      base: o.target.base,
      keys: o.keys,
      area: d.area,
      weights,
      seed: o.seed,
      stream: t,
      mode: o.mode,
      rate: o.mode === 'rate' ? o.rate! / threads : 0,
      connections: Math.max(1, Math.round(o.connections / threads)),
      durationMs: o.durationS * 1000,
      requests,
      timeoutMs: o.timeoutMs,
      clientAddresses: o.clientAddresses ?? 0,
    });
  }
  const live = plans.filter((p) => p.requests > 0).map(startThread);
  try {
    await Promise.all(live.map((t) => t.ready));
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const results = await Promise.all(live.map((t) => t.go()));
    const wall = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const seconds = Math.max(...results.map((r) => r.seconds));
    return mergeReport(
      results.map((r) => r.data),
      {
        target: o.target.url,
        mode: o.mode,
        rate: o.rate,
        connections: o.connections,
        threads: live.length,
        seed: o.seed,
        mix: weights,
        seconds,
        cpuCores: (cpu.user + cpu.system) / 1e6 / wall,
        // A discovery given by the caller was counted where it ran: its requests are not this run's.
        discovery: discovered
          ? { requests: d.requests, credits: d.credits, statuses: d.statuses, buildings: d.buildings, cells: d.cells }
          : { requests: 0, credits: 0, statuses: {}, buildings: d.buildings, cells: d.cells },
        warnings: [...d.warnings, ...warnings],
      },
    );
  } finally {
    await Promise.all(live.map((t) => t.stop()));
  }
}
