import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';

describe('config: request limits', () => {
  it('defaults to the limits of spec section 8', () => {
    const c = loadConfig({});
    expect(c.perKeyPerMinute).toBe(60);
    expect(c.dailyQuota).toBe(5_000);
  });

  it('reads raised limits for load tests, and refuses a bad value by its name', () => {
    const c = loadConfig({ EDIFICE_KEY_PER_MINUTE: '1000000', EDIFICE_DAILY_QUOTA: '50000000' });
    expect(c.perKeyPerMinute).toBe(1_000_000);
    expect(c.dailyQuota).toBe(50_000_000);
    expect(() => loadConfig({ EDIFICE_KEY_PER_MINUTE: '0' })).toThrow(/EDIFICE_KEY_PER_MINUTE/);
    expect(() => loadConfig({ EDIFICE_DAILY_QUOTA: 'lots' })).toThrow(/EDIFICE_DAILY_QUOTA/);
  });
});
