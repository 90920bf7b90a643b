/**
 * Response encoding by the Accept header: MessagePack (msgpackr `pack`, plain maps, readable by
 * any MessagePack library) when the client asks for it, JSON otherwise. A client is never
 * refused for its Accept header: anything else gets JSON.
 */
import { pack } from 'msgpackr';

export type Encoding = 'json' | 'msgpack';

export const CONTENT_TYPE: Readonly<Record<Encoding, string>> = {
  json: 'application/json; charset=utf-8',
  msgpack: 'application/msgpack',
};

const MSGPACK_TYPES = new Set(['application/msgpack', 'application/x-msgpack', 'application/vnd.msgpack']);
const JSON_TYPES = new Set(['application/json', 'application/*', '*/*']);

/** The media ranges of an Accept header, lowercase, each with its q (1 unless given; 0 when unreadable). */
export function mediaRanges(accept: string): [media: string, q: number][] {
  return accept.split(',').map((range) => {
    const [type, ...params] = range.split(';');
    let q = 1;
    for (const param of params) {
      const [k, v] = param.split('=');
      if (k.trim().toLowerCase() === 'q') {
        const n = Number(v);
        q = Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0;
      }
    }
    return [type.trim().toLowerCase(), q];
  });
}

/**
 * MessagePack when a MessagePack media type is named with q > 0 and ranks at least as high as
 * JSON (`application/json`, `application/*` or `*∕*`); JSON otherwise, and with no Accept.
 */
export function negotiateEncoding(accept: string | undefined): Encoding {
  if (!accept || !/msgpack/i.test(accept)) return 'json';
  let qMsgpack = 0;
  let qJson = 0;
  for (const [media, q] of mediaRanges(accept)) {
    if (MSGPACK_TYPES.has(media)) qMsgpack = Math.max(qMsgpack, q);
    else if (JSON_TYPES.has(media)) qJson = Math.max(qJson, q);
  }
  return qMsgpack > 0 && qMsgpack >= qJson ? 'msgpack' : 'json';
}

/** The document in the chosen encoding. */
export function encode(doc: unknown, encoding: Encoding): Buffer {
  return encoding === 'msgpack' ? pack(doc) : Buffer.from(JSON.stringify(doc));
}
