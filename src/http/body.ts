/**
 * Reading a request body with uWebSockets.js: chunks arrive through onData and uWS reuses each
 * chunk's memory after the callback, so every chunk is copied. A body over `max` bytes stops the
 * reading and is answered 413 by the caller; a client that goes away is reported as aborted, so
 * the caller writes nothing to a closed response.
 */
import type { HttpResponse } from 'uWebSockets.js';

export type BodyResult = { kind: 'body'; body: Buffer } | { kind: 'too_large' } | { kind: 'aborted' };

/** Reads the whole body (at most `max` bytes). Sets onAborted: call before any other await. */
export function readBody(res: HttpResponse, max: number, done: (result: BodyResult) => void): { aborted(): boolean } {
  let aborted = false;
  let finished = false;
  const chunks: Buffer[] = [];
  let size = 0;
  res.onAborted(() => {
    aborted = true;
    if (!finished) {
      finished = true;
      done({ kind: 'aborted' });
    }
  });
  res.onData((chunk, isLast) => {
    if (finished) return;
    size += chunk.byteLength;
    if (size > max) {
      finished = true;
      done({ kind: 'too_large' });
      return;
    }
    chunks.push(Buffer.from(chunk.slice(0)));
    if (isLast) {
      finished = true;
      done({ kind: 'body', body: Buffer.concat(chunks, size) });
    }
  });
  return { aborted: () => aborted };
}
