/**
 * The map page (`/` and `<base>/map`): MapLibre GL JS from the installed package and a small
 * script of our own, all served by Edifice itself, so the page needs nothing from the internet
 * (a basemap is optional: EDIFICE_MAP_BASEMAP).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Reply } from './reply.ts';

const here = dirname(fileURLToPath(import.meta.url));
const maplibreDist = join(dirname(createRequire(import.meta.url).resolve('maplibre-gl/package.json')), 'dist');

export interface MapPageOptions {
  basePath: string;
  /** A raster tile URL template with {z}/{x}/{y}, or a MapLibre style URL; empty: no basemap. */
  basemap: string;
}

export interface MapView {
  /** Longitude, latitude to open on. */
  center: [number, number];
  zoom: number;
  /** The served snapshots' attributions (OpenStreetMap data must name its contributors). */
  attribution: string;
}

export interface MapAssets {
  page(view: MapView): Reply;
  /** The static files under `<base>/map/`, by name. */
  files: Map<string, Reply>;
}

const CACHE = 'public, max-age=3600';

export function loadMapAssets(options: MapPageOptions): MapAssets {
  const html = readFileSync(join(here, 'map', 'index.html'), 'utf8').replaceAll('__BASE__', options.basePath);
  const file = (path: string, type: string): Reply => ({ status: 200, headers: { 'Content-Type': type, 'Cache-Control': CACHE }, body: readFileSync(path) });
  const files = new Map<string, Reply>([
    ['maplibre-gl.js', file(join(maplibreDist, 'maplibre-gl.js'), 'text/javascript; charset=utf-8')],
    ['maplibre-gl.css', file(join(maplibreDist, 'maplibre-gl.css'), 'text/css; charset=utf-8')],
    ['map.js', file(join(here, 'map', 'map.js'), 'text/javascript; charset=utf-8')],
  ]);
  return {
    files,
    page(view) {
      // JSON inside a <script> element: '<' escaped so no value can close the element.
      const config = JSON.stringify({ base: options.basePath, basemap: options.basemap, ...view }).replaceAll('<', '\\u003c');
      return {
        status: 200,
        headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache' },
        body: html.replace('__CONFIG__', config),
      };
    },
  };
}
