/**
 * uWebSockets.js, and which implementation of it runs. The package we install loads its native
 * binary on Node 20 and silently falls back to a JS server elsewhere, which cannot serve this API:
 * startServer refuses it (server.ts fallbackRefusal).
 */
import { createRequire } from 'node:module';
import type * as UWS from 'uWebSockets.js';

const require = createRequire(import.meta.url);

function detectNative(): boolean {
  if (/^(1|true)$/i.test(process.env.UWS_USE_FALLBACK ?? '')) return false;
  try {
    require(`uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
    return true;
  } catch {
    return false;
  }
}

export const uws: typeof UWS = require('uWebSockets.js');
export const uwsImplementation: 'native' | 'js-fallback' = detectNative() ? 'native' : 'js-fallback';
