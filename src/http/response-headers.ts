/**
 * Headers decided when a request arrives and written with whatever answers it (CORS): kept by
 * response, since an answer may be written later (a page waiting for its charge).
 */
import type { HttpResponse } from 'uWebSockets.js';

const extra = new WeakMap<HttpResponse, Record<string, string>>();

export function addResponseHeaders(res: HttpResponse, headers: Record<string, string>): void {
  extra.set(res, headers);
}

export function responseHeadersOf(res: HttpResponse): Record<string, string> | undefined {
  return extra.get(res);
}
