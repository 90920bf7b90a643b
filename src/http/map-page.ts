/**
 * The map page (`/` and `<base>/map`): MapLibre GL JS from the installed package and a small
 * script of our own, all served by Edifice itself, so the page needs nothing from the internet
 * (a basemap is optional: EDIFICE_MAP_BASEMAP).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TemplatedApp } from 'uWebSockets.js';
import type { HttpContext } from './context.ts';
import type { Reply } from './reply.ts';
import { fileReply, packageDir, serveStatic } from './static-files.ts';

const here = join(dirname(fileURLToPath(import.meta.url)), 'map');
const JS = 'text/javascript; charset=utf-8';
const MAX_AGE_S = 3600;

export function registerMapPage(app: TemplatedApp, ctx: HttpContext): void {
  const base = ctx.config.basePath;
  const html = readFileSync(join(here, 'index.html'), 'utf8').replaceAll('__BASE__', base);
  const page = (): Reply => {
    const { snapshots } = ctx.catalog.view();
    const s = snapshots[0];
    const known = s !== undefined && s.rows > 0;
    // Opens on the middle row of the first country: rows are in Hilbert order, so a built-up spot.
    const config = {
      base,
      basemap: ctx.config.mapBasemap,
      center: known ? [s.lon[s.rows >> 1], s.lat[s.rows >> 1]] : [0, 0],
      zoom: known ? 16 : 1,
      // OpenStreetMap data must name its contributors.
      attribution: [...new Set(snapshots.flatMap((snap) => snap.sources.map((src) => src.attribution)))].join('; '),
    };
    // JSON inside a <script> element: '<' escaped so no value can close the element.
    const json = JSON.stringify(config).replaceAll('<', '\\u003c');
    return {
      status: 200,
      headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache' },
      body: html.replace('__CONFIG__', json),
    };
  };
  serveStatic(app, ctx, '/', '/map', page);
  serveStatic(app, ctx, `${base}/map`, '/map', page);
  const maplibre = join(packageDir('maplibre-gl'), 'dist');
  serveStatic(app, ctx, `${base}/map/maplibre-gl.js`, '/map', fileReply(join(maplibre, 'maplibre-gl.js'), JS, MAX_AGE_S));
  serveStatic(
    app,
    ctx,
    `${base}/map/maplibre-gl.css`,
    '/map',
    fileReply(join(maplibre, 'maplibre-gl.css'), 'text/css; charset=utf-8', MAX_AGE_S),
  );
  serveStatic(app, ctx, `${base}/map/map.js`, '/map', fileReply(join(here, 'map.js'), JS, MAX_AGE_S));
}
