/**
 * uWebSockets.js, and which implementation of it runs. The package we install loads its native
 * binary on Node 20 and silently falls back to a JS server elsewhere, which cannot serve this API:
 * startServer refuses it (fallbackRefusal).
 */
import { createRequire } from 'node:module';
import type * as UWS from 'uWebSockets.js';
import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';

const require = createRequire(import.meta.url);

const forcedFallback = /^(1|true)$/i.test(process.env.UWS_USE_FALLBACK ?? '');

function detectNative(): boolean {
  if (forcedFallback) return false;
  try {
    require(`uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
    return true;
  } catch {
    return false;
  }
}

export const uws: typeof UWS = require('uWebSockets.js');
export const uwsImplementation: 'native' | 'js-fallback' = detectNative() ? 'native' : 'js-fallback';

/** Why the server does not start on the JS fallback, and what to do (startServer refuses it). */
export function fallbackRefusal(): string {
  return (
    (forcedFallback
      ? "UWS_USE_FALLBACK asks for uWebSockets.js's JS fallback"
      : `uWebSockets.js has no native binary for Node ${process.versions.node} on ${process.platform}-${process.arch} and would run its JS fallback`) +
    ', which cannot serve this API (its requests fail to read their query string, and the first one would end the process). ' +
    `Run Node 20 (package.json "engines": >=20.19 <21) on linux, darwin or win32${forcedFallback ? ', without UWS_USE_FALLBACK' : ''}.`
  );
}

type ListenCallback = (socket: us_listen_socket | false) => void;

/**
 * `app.listen(host, port, options, cb)`: the package's typings lack this form, the native module
 * has it. `exclusive` leaves SO_REUSEPORT off, so the listen fails when anyone listens there.
 * uWS calls `cb` before this returns.
 */
export function listenOn(app: TemplatedApp, host: string, port: number, exclusive: boolean, cb: ListenCallback): void {
  const options = exclusive ? (uws as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number }).LIBUS_LISTEN_EXCLUSIVE_PORT : 0;
  (app as unknown as { listen(h: string, p: number, o: number, cb: ListenCallback): void }).listen(host, port, options, cb);
}
