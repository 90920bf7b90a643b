/// <reference lib="dom" />
/**
 * The map page end to end in headless Chromium (Debian's `chromium`, driven by playwright-core):
 * the page loads MapLibre from the server itself, a pasted key loads the view's buildings from the
 * GeoJSON API, the map draws as many buildings as the API returned for that view, the credits
 * shown are the ones charged, and a click shows the building's fields. A screenshot is kept in
 * test-results/map-page.png.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { writeSyntheticCountry } from '../src/synth/generate.ts';
import { startTestServer, syntheticSnapshots, workspaceWithKey, type TestServer } from './http-helpers.ts';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const OUTPUT = fileURLToPath(new URL('../test-results/', import.meta.url));

let t: TestServer;
let browser: Browser;
beforeAll(async () => {
  if (!CHROMIUM) throw new Error('chromium is not installed (Debian: apt-get install -y chromium)');
  const dir = await syntheticSnapshots(4000, 11);
  // Two small countries either side of the antimeridian, by Taveuni.
  for (const [country, bounds] of [
    ['XF', [179.985, -16.82, 179.9995, -16.8]],
    ['XG', [-179.9995, -16.82, -179.985, -16.8]],
  ] as const) {
    await writeSyntheticCountry({ seed: 5, buildings: 150, country, bounds: [...bounds], outDir: join(dir, 'snapshots') });
  }
  t = await startTestServer(dir);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Root in CI has no user namespace for the sandbox; WebGL through SwiftShader, with no GPU.
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist'],
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  t?.close();
});

/**
 * The map page with `key` pasted, once it has loaded its first view; the addresses it fetched
 * outside the server, and the errors it threw, as they come.
 */
async function openWithKey(key: string): Promise<{ page: Page; outside: string[]; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  const outside: string[] = [];
  // MapLibre starts its worker from a blob: URL; every address fetched must be the server's own.
  page.on('request', (r) => {
    if (/^https?:/.test(r.url()) && !r.url().startsWith(t.url)) outside.push(r.url());
  });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${t.url}/`);
  await page.fill('#key', key);
  await page.click('button[type=submit]');
  await page.waitForFunction(() => (window as any).edifice.state.loads >= 1, null, { timeout: 60_000 });
  return { page, outside, errors };
}

describe('the map page', () => {
  it('serves the page and MapLibre from the server itself, with no outside address', async () => {
    const page = await (await fetch(`${t.url}/`)).text();
    expect(page).toContain('<script src="/v1/map/maplibre-gl.js">');
    const urls = page.match(/(src|href)="[^"]+"/g) ?? [];
    expect(urls.every((u) => u.includes('"/v1/map/'))).toBe(true);
    const js = await fetch(`${t.base}/map/maplibre-gl.js`);
    expect([js.status, js.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8']);
    expect((await js.text()).length).toBeGreaterThan(100_000);
    expect((await fetch(`${t.base}/map/nothing.js`)).status).toBe(404);
    expect((await fetch(`${t.base}/map`)).status).toBe(200);
  });

  it('draws the buildings the API returns for the view, shows their cost and a clicked building', async () => {
    const { key, workspaceId } = workspaceWithKey(t.ledger, 1000, 'map');
    const before = t.ledger.balance(workspaceId);
    const { page, outside, errors } = await openWithKey(key);
    const state = await page.evaluate(() => {
      const s = (window as any).edifice.state;
      return { features: s.features.length, charged: s.charged, url: s.lastUrl, status: document.getElementById('status')!.textContent };
    });
    expect(state.features).toBeGreaterThan(0);

    // The same request from outside the page: the API's answer for that view (now free: opened).
    const api = await fetch(`${t.url}${state.url}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(api.status).toBe(200);
    const collection = (await api.json()) as { features: { properties: { building_id: string } }[] };
    expect(collection.features.length).toBe(state.features);
    expect(api.headers.get('x-credits-charged')).toBe('0');
    // The page's first load paid one credit a building, and says so.
    expect(state.charged).toBe(state.features);
    expect(before - t.ledger.balance(workspaceId)).toBe(state.features);
    expect(state.status).toContain(`This view cost ${state.charged} credit`);

    // What the map draws: every feature of the answer, once.
    await page.waitForFunction((n) => (window as any).edifice.rendered() === n, state.features, { timeout: 30_000 });

    // A click on a building's representative point (inside its outline) shows that building.
    const target = await page.evaluate(() => {
      const e = (window as any).edifice;
      const ids = new Set(e.renderedIds());
      const f = e.state.features.find((x: any) => ids.has(x.properties.building_id));
      const p = e.map.project([f.properties.longitude, f.properties.latitude]);
      const box = document.getElementById('map')!.getBoundingClientRect();
      return { id: f.properties.building_id, x: box.left + p.x, y: box.top + p.y };
    });
    await page.mouse.click(target.x, target.y);
    await page.waitForFunction(() => document.getElementById('details')!.textContent!.includes('building_id'));
    expect(await page.textContent('#details')).toContain(target.id);

    // Colour by another field: the legend follows.
    await page.selectOption('#colour-by', 'solar_presence');
    expect(await page.textContent('#legend')).toContain('registered_at_address');

    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, 'map-page.png') });
    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('across the antimeridian asks for both sides, and on a copy of the world panned to, for the same view as on the first', async () => {
    const { key } = workspaceWithKey(t.ledger, 100_000, 'map-wrap');
    const { page, errors } = await openWithKey(key);
    const view = async (center: [number, number], zoom: number) => {
      const loads = await page.evaluate(() => (window as any).edifice.state.loads);
      await page.evaluate(([c, z]) => (window as any).edifice.map.jumpTo({ center: c, zoom: z }), [center, zoom] as const);
      await page.waitForFunction((n) => (window as any).edifice.state.loads > n, loads, { timeout: 30_000 });
      return page.evaluate(() => {
        const s = (window as any).edifice.state;
        return {
          urls: s.lastUrls as string[],
          ids: (s.features as any[]).map((f) => f.properties.building_id as string).sort(),
          lons: (s.features as any[]).map((f) => f.properties.longitude as number),
          error: s.error,
        };
      });
    };
    // What the API answers for a URL the page asked, from outside the page.
    const answered = async (urls: string[]) => {
      const ids: string[] = [];
      for (const url of urls) {
        const res = await fetch(`${t.url}${url}`, { headers: { Authorization: `Bearer ${key}` } });
        expect(res.status, url).toBe(200);
        for (const f of ((await res.json()) as { features: { properties: { building_id: string } }[] }).features)
          ids.push(f.properties.building_id);
      }
      return ids.sort();
    };

    // A view centred on 180°: two boxes, one each side, and buildings from both countries.
    const across = await view([180, -16.805], 15);
    expect(across.error).toBeNull();
    expect(across.urls).toHaveLength(2);
    expect(across.urls[0]).toMatch(/bbox=179\.\d+,-16\.\d+,180,-16\.\d+&/);
    expect(across.urls[1]).toMatch(/bbox=-180,-16\.\d+,-179\.\d+,-16\.\d+&/);
    expect(across.lons.some((x) => x > 179.99)).toBe(true);
    expect(across.lons.some((x) => x < -179.99)).toBe(true);
    expect(across.ids).toEqual(await answered(across.urls));
    // The same place from the other name of the meridian, and one world to the east.
    for (const lon of [-180, 540]) {
      const again = await view([lon, -16.805], 15);
      expect([again.error, again.ids]).toEqual([null, across.ids]);
    }

    // The first country's view on the copy of the world one turn east: one box, as on the first copy.
    const first = await view([9.55, 47.15], 14);
    const turned = await view([9.55 + 360, 47.15], 14);
    expect(first.ids.length).toBeGreaterThan(0);
    expect([turned.error, turned.urls, turned.ids]).toEqual([null, first.urls, first.ids]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('says why when the key is refused', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/v1/map`);
    await page.fill('#key', 'edf_live_not-a-key');
    await page.click('button[type=submit]');
    await page.waitForFunction(() => document.getElementById('status')!.className === 'error', null, { timeout: 60_000 });
    expect(await page.textContent('#status')).toMatch(/^401 /);
    await page.close();
  }, 120_000);
});
