/**
 * Prometheus metrics for operators (`GET /metrics` on the operator port, metrics-server.ts). One
 * registry per thread, each with prom-client's process and runtime metrics (resident memory,
 * event-loop lag, heap, GC) labelled by the thread; worker-pool.ts sums the threads' registries.
 */
import { createRequire } from 'node:module';
import type { Registry } from 'prom-client';
import type { CountryReport } from '../catalog/catalog.ts';

type PromClient = typeof import('prom-client');
let loaded: PromClient | undefined;

/**
 * prom-client, loaded on first use rather than with the module: the main thread of a server with
 * workers needs it only once it serves, and its load (some 40 ms) would otherwise come before the
 * first answer.
 */
export function promClient(): PromClient {
  return (loaded ??= createRequire(import.meta.url)('prom-client') as PromClient);
}

/**
 * A registry with prom-client's default metrics of this thread, labelled `thread` (main, ledger,
 * http-<id>). Process-wide ones (resident memory, CPU, file descriptors) read the same in every
 * thread; event-loop lag, heap and GC are the thread's own.
 */
export function threadRegistry(thread: string): Registry {
  const { Registry, collectDefaultMetrics } = promClient();
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, labels: { thread } });
  return registry;
}

/** What /metrics reads of a cache when asked. */
interface WatchedCache {
  readonly size: number;
  readonly hits: number;
  readonly misses: number;
}

export class Metrics {
  private readonly prom = promClient();
  readonly registry = new this.prom.Registry();
  /** What the snapshot gauges read (watchSnapshots). */
  private snapshotReport: () => CountryReport[] = () => [];
  readonly requests = new this.prom.Counter({
    name: 'edifice_http_requests_total',
    help: 'HTTP requests by route and status.',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });
  readonly latency = new this.prom.Histogram({
    name: 'edifice_http_request_duration_seconds',
    help: 'Time from request to response by route.',
    labelNames: ['route'] as const,
    registers: [this.registry],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  });
  /**
   * The wait behind the slowest answers under load: a page that may cost credits waits for the
   * ledger (the tail of that wait follows its slow commits: bench/README.md, What the operating defaults rest on).
   */
  readonly chargeWait = new this.prom.Histogram({
    name: 'edifice_charge_wait_seconds',
    help: "Time a page waits for its charge: the ledger's group commit, its fsync included (with workers, the ledger thread's answer, which for a page it knows to be free comes without a commit). Pages answered free at once do not wait.",
    registers: [this.registry],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  });
  readonly credits = new this.prom.Counter({
    name: 'edifice_credits_charged_total',
    help: 'Credits charged to workspaces.',
    registers: [this.registry],
  });
  // Every worker thread reports the same snapshots: summed over workers they take the first.
  readonly snapshotBuildings = new this.prom.Gauge({
    name: 'edifice_snapshot_buildings',
    help: 'Buildings in the serving snapshot of each country.',
    labelNames: ['country', 'date'] as const,
    registers: [this.registry],
    aggregator: 'first',
    // Read first of the three (registered first): sets all of them from one report.
    collect: () => this.publishSnapshots(),
  });
  readonly snapshotBytes = new this.prom.Gauge({
    name: 'edifice_snapshot_bytes',
    help: 'Bytes held by the serving snapshot of each country (once, however many workers share it).',
    labelNames: ['country', 'date'] as const,
    registers: [this.registry],
    aggregator: 'first',
  });
  readonly snapshotDate = new this.prom.Gauge({
    name: 'edifice_snapshot_date_seconds',
    help: 'Snapshot date of each country, as a Unix time.',
    labelNames: ['country'] as const,
    registers: [this.registry],
    aggregator: 'first',
  });

  /**
   * The fragment cache of this thread (fragment-cache.ts), read when /metrics is asked: its
   * size and its hits and misses, summed over workers. A low hit share at a full cache says
   * EDIFICE_FRAGMENT_CACHE_MB is too small for the traffic.
   */
  watchFragmentCache(cache: WatchedCache): void {
    this.watchCache(
      cache,
      ['edifice_fragment_cache_bytes', 'Bytes of encoded buildings held by the fragment caches (EDIFICE_FRAGMENT_CACHE_MB a thread).'],
      [
        'edifice_fragment_cache_lookups_total',
        'Buildings looked up in the fragment caches, by result (hit: served encoded; miss: encoded then).',
      ],
    );
  }

  /** The ranking cache of this thread (query/rankings.ts): pages past the first, by whether they ranked. */
  watchRankingCache(cache: WatchedCache): void {
    this.watchCache(
      cache,
      ['edifice_ranking_cache_bytes', 'Bytes of rankings kept for paging walks by the ranking caches.'],
      [
        'edifice_ranking_cache_pages_total',
        'GET /buildings pages past the first, by result (hit: a slice of a kept ranking; miss: ranked).',
      ],
    );
  }

  /**
   * A replica of a fleet: the limit decisions it took alone because Redis could not be reached
   * (each at 1/EDIFICE_REPLICAS of the limit), and the pages it answered free without PostgreSQL.
   */
  watchFleet(read: () => { limitFallbacks: number; answeredAlone: number }): void {
    const registers = [this.registry];
    const fallbacks = new this.prom.Counter({
      name: 'edifice_limit_fallbacks_total',
      help: 'Limit and quota decisions this replica took alone, at 1/EDIFICE_REPLICAS of the limit, because Redis could not be reached.',
      registers,
      collect: () => {
        fallbacks.reset();
        fallbacks.inc(read().limitFallbacks);
      },
    });
    const alone = new this.prom.Counter({
      name: 'edifice_pages_answered_without_ledger_total',
      help: 'Pages answered free while PostgreSQL could not be reached, their buildings known opened by this replica.',
      registers,
      collect: () => {
        alone.reset();
        alone.inc(read().answeredAlone);
      },
    });
  }

  private watchCache(cache: WatchedCache, bytes: [string, string], lookups: [string, string]): void {
    new this.prom.Gauge({
      name: bytes[0],
      help: bytes[1],
      registers: [this.registry],
      collect() {
        this.set(cache.size);
      },
    });
    let counted = { hits: 0, misses: 0 };
    new this.prom.Counter({
      name: lookups[0],
      help: lookups[1],
      labelNames: ['result'] as const,
      registers: [this.registry],
      collect() {
        this.inc({ result: 'hit' }, cache.hits - counted.hits);
        this.inc({ result: 'miss' }, cache.misses - counted.misses);
        counted = { hits: cache.hits, misses: cache.misses };
      },
    });
  }

  /** `thread`: the label of this thread's process and runtime metrics (threadRegistry). */
  constructor(thread: string) {
    this.prom.collectDefaultMetrics({ register: this.registry, labels: { thread } });
  }

  /** The serving snapshots of `report()` as gauges, read whenever the metrics are. */
  watchSnapshots(report: () => CountryReport[]): void {
    this.snapshotReport = report;
  }

  private publishSnapshots(): void {
    this.snapshotBuildings.reset();
    this.snapshotBytes.reset();
    this.snapshotDate.reset();
    for (const r of this.snapshotReport()) {
      this.snapshotBuildings.set({ country: r.country, date: r.date }, r.buildings);
      this.snapshotBytes.set({ country: r.country, date: r.date }, r.bytesHeld);
      this.snapshotDate.set({ country: r.country }, Date.parse(`${r.date}T00:00:00Z`) / 1000);
    }
  }

  observe(route: string, status: number, seconds: number): void {
    this.requests.inc({ route, status: String(status) });
    this.latency.observe({ route }, seconds);
  }
}
