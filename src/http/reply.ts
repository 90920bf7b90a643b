/**
 * Writing a response: status line, headers and body inside one `res.cork`, and the error body of
 * spec section 7. Everything the server answers goes through `send`.
 */
import type { HttpResponse } from 'uWebSockets.js';
import { ApiError, CONTENT_TYPE, encode, errorBody, publicErrorBody, publicErrorStatus, type Encoding } from '../api/index.ts';
import { responseHeadersOf } from './response-headers.ts';

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  201: '201 Created',
  202: '202 Accepted',
  204: '204 No Content',
  304: '304 Not Modified',
  413: '413 Payload Too Large',
  415: '415 Unsupported Media Type',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  402: '402 Payment Required',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array | string;
}

/**
 * Writes `reply`. To a HEAD request (`head`), the same status and headers with the length the body
 * would have, and no body (RFC 9110 9.3.2): a client reads no body after a HEAD response, so body
 * bytes would be taken for the start of the next response on the connection. With `closeConnection`
 * the connection ends after a response with a body (uWebSockets.js then sends `Connection: close`).
 */
export function send(res: HttpResponse, reply: Reply, head = false, closeConnection = false): void {
  res.cork(() => {
    res.writeStatus(STATUS_TEXT[reply.status] ?? String(reply.status));
    for (const name in reply.headers) res.writeHeader(name, reply.headers[name]);
    const extra = responseHeadersOf(res);
    if (extra) for (const name in extra) res.writeHeader(name, extra[name]);
    if (reply.status === 304 || reply.status === 204) {
      // No body, and no Content-Length: a 304's would have to be the 200's (RFC 9110 8.6), and
      // uWS's end('') writes 0, which a cache may store as the page's length; a 204 has none.
      res.endWithoutBody();
    } else if (head) {
      // endWithoutBody(length) aborts the process (uWebSockets issue #1855), and so does any other
      // argument list than none (so a HEAD does not close its connection): it writes no length.
      res.writeHeader('Content-Length', String(typeof reply.body === 'string' ? Buffer.byteLength(reply.body) : reply.body.byteLength));
      res.endWithoutBody();
    } else res.end(reply.body, closeConnection);
  });
}

/** The body of an authenticated error: `{error: {code, message, parameter}}` in the asked encoding. */
export function errorReply(err: ApiError, encoding: Encoding, headers: Record<string, string> = {}): Reply {
  const h: Record<string, string> = { ...headers, 'Content-Type': CONTENT_TYPE[encoding] };
  if (err.retryAfter !== undefined) h['Retry-After'] = String(err.retryAfter);
  return { status: err.status, headers: h, body: encode(errorBody(err), encoding) };
}

/** A plain JSON reply for operator endpoints and unknown routes. */
export function jsonReply(status: number, doc: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'Content-Type': CONTENT_TYPE.json, ...headers }, body: JSON.stringify(doc) };
}

/** The flat body of an error under /public (spec 7): `{error: code}`, with message for invalid_parameter. */
export function publicErrorReply(err: ApiError, headers: Record<string, string> = {}): Reply {
  const h: Record<string, string> = { ...headers, 'Content-Type': CONTENT_TYPE.json, 'Cache-Control': 'no-store' };
  if (err.retryAfter !== undefined) h['Retry-After'] = String(err.retryAfter);
  return { status: publicErrorStatus(err), headers: h, body: JSON.stringify(publicErrorBody(err)) };
}

/**
 * The answer to an unexpected failure, which the caller logs: 500 `internal` in the route's error
 * format (`public`: the flat one of /public), never cached.
 */
export function internalErrorReply(format: Encoding | 'public', headers: Record<string, string> = {}): Reply {
  const err = new ApiError('internal', 'Unexpected error; it has been logged.');
  if (format === 'public') return publicErrorReply(err, headers);
  return errorReply(err, format, { ...headers, 'Cache-Control': 'no-store' });
}
