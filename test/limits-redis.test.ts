/**
 * The limits shared through Redis (a throwaway redis-server): exact across replicas, on Redis's
 * clock, the same sliding window as the in-memory limiter; with Redis away, each replica alone at
 * 1/N of each limit, counted, never an error; shared again once Redis is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLimits } from '../src/ledger/index.ts';
import { startRedis, type TestRedis } from './services/redis.ts';

let redis: TestRedis;
const open: RedisLimits[] = [];
beforeAll(async () => {
  redis = await startRedis();
}, 30_000);
afterAll(async () => {
  for (const l of open) await l.close();
  await redis?.destroy();
});

async function replica(replicas = 3, onFallback?: (err: Error | null) => void): Promise<RedisLimits> {
  const limits = await RedisLimits.connect(redis.url, { replicas, onFallback, commandTimeoutMs: 1_000 });
  open.push(limits);
  return limits;
}

describe('limits in Redis', () => {
  it("three replicas share one key's 60 a minute: of 100 quick requests exactly 60 pass, with truthful headers", async () => {
    const replicas = await Promise.all([replica(), replica(), replica()]);
    const limiters = replicas.map((r) => r.window('key', 60, 60_000));
    const decisions = await Promise.all(Array.from({ length: 100 }, (_, i) => limiters[i % 3].take('k1')));
    expect(decisions.filter((d) => d.ok)).toHaveLength(60);
    expect(
      decisions
        .filter((d) => d.ok)
        .map((d) => d.remaining)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 60 }, (_, i) => i));
    for (const d of decisions.filter((x) => x.ok)) expect(d.resetS).toBe(60);
    const refused = decisions.filter((d) => !d.ok);
    for (const d of refused) {
      expect(d).toMatchObject({ limit: 60, remaining: 0 });
      // The first of the 60 leaves the window a minute after it came, less the time since.
      expect(d.retryAfterS).toBeGreaterThanOrEqual(59);
      expect(d.retryAfterS).toBeLessThanOrEqual(60);
    }
    // Another key has its own minute; the replicas decided in Redis every time.
    expect((await limiters[1].take('k2')).ok).toBe(true);
    expect(replicas.map((r) => r.fallbacks)).toEqual([0, 0, 0]);
  });

  it("a window slides on Redis's clock: the oldest request leaves it when Retry-After says", async () => {
    const [a, b] = [await replica(2), await replica(2)];
    const la = a.window('short', 3, 1_500);
    const lb = b.window('short', 3, 1_500);
    expect((await la.take('k')).ok).toBe(true);
    expect((await lb.take('k')).ok).toBe(true);
    expect((await la.take('k')).ok).toBe(true);
    const refused = await lb.take('k');
    expect(refused).toMatchObject({ ok: false, remaining: 0, retryAfterS: 2 });
    // Wait until the first request has left (Redis's answer says within 1.5 s), then one more fits.
    let passed = false;
    for (let i = 0; i < 40 && !passed; i++) {
      await new Promise((r) => setTimeout(r, 100));
      passed = (await la.take('k')).ok;
    }
    expect(passed).toBe(true);
  });

  it('a limit raised past the ring counts by grains, never over the limit; the daily quota is exact across replicas', async () => {
    const [a, b] = [await replica(2), await replica(2)];
    const big = [a.window('big', 1_000, 60_000), b.window('big', 1_000, 60_000)];
    const decisions = await Promise.all(Array.from({ length: 1_100 }, (_, i) => big[i % 2].take('k')));
    expect(decisions.filter((d) => d.ok)).toHaveLength(1_000);
    // The grain outlives the minute by up to 249 ms; the reset still reads the minute, not 61.
    expect(new Set(decisions.filter((d) => d.ok).map((d) => d.resetS))).toEqual(new Set([60]));
    const quotas = [a.dailyQuota(50), b.dailyQuota(50)];
    const days = await Promise.all(Array.from({ length: 80 }, (_, i) => quotas[i % 2].take('ws_1')));
    expect(days.filter((d) => d.ok)).toHaveLength(50);
    expect(Math.max(...days.map((d) => d.used))).toBe(50);
    expect(days.every((d) => d.resetS > 0 && d.resetS <= 86_400)).toBe(true);
  });

  it('Redis away: each replica alone at 1/N of the limit, counted and said once, never an error; shared again once Redis is back', async () => {
    const heard: (string | null)[] = [];
    const replicas = [await replica(3, (e) => heard.push(e === null ? null : 'away')), await replica(3)];
    const limiters = replicas.map((r) => r.window('outage', 60, 60_000));
    const quota = replicas[0].dailyQuota(30);
    expect((await limiters[0].take('k')).ok).toBe(true);
    await redis.stop();
    const alone = await Promise.all(Array.from({ length: 30 }, () => limiters[0].take('k')));
    // 60 / 3 replicas: 20 a minute each, and the headers say so.
    expect(alone.filter((d) => d.ok)).toHaveLength(20);
    expect(alone[0]).toMatchObject({ ok: true, limit: 20, remaining: 19 });
    expect(alone[29]).toMatchObject({ ok: false, limit: 20, remaining: 0 });
    const days = await Promise.all(Array.from({ length: 15 }, () => quota.take('ws_2')));
    expect(days.filter((d) => d.ok)).toHaveLength(10);
    expect(replicas[0].fallbacks).toBe(45);
    expect(replicas[0].shared).toBe(false);
    expect(heard).toEqual(['away']);

    await redis.start(); // empty: the outage's counts were each replica's own
    let back = false;
    for (let i = 0; i < 100 && !back; i++) {
      await new Promise((r) => setTimeout(r, 100));
      back = (await limiters[1].take('after')).ok && replicas[1].shared;
    }
    expect(back).toBe(true);
    const after = await Promise.all(Array.from({ length: 70 }, (_, i) => limiters[i % 2].take('k-after')));
    expect(after.filter((d) => d.ok)).toHaveLength(60);
    expect(heard).toEqual(['away', null]);
  });

  it('a replica started while Redis is away decides alone, then shares once Redis comes up', async () => {
    await redis.stop();
    const heard: (string | null)[] = [];
    const late = await replica(2, (e) => heard.push(e === null ? null : 'away'));
    const limiter = late.window('late', 10, 60_000);
    expect(await limiter.take('k')).toMatchObject({ ok: true, limit: 5, remaining: 4 });
    expect(late.shared).toBe(false);
    await redis.start();
    let shared = false;
    for (let i = 0; i < 100 && !shared; i++) {
      await new Promise((r) => setTimeout(r, 100));
      shared = (await limiter.take(`probe-${i}`)).limit === 10;
    }
    expect(shared).toBe(true);
    expect(heard).toEqual(['away', null]);
  });
});
