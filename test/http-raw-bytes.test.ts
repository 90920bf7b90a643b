/**
 * Bytes that are not UTF-8 in a request line, sent raw over a plain TCP socket (as no HTTP client
 * library would send them) and percent-encoded: both are refused with 400 invalid_parameter
 * naming the parameter, on the authenticated API and on the public pages. Raw UTF-8 is still read
 * as the percent-encoded form is.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startTestServer, syntheticSnapshots, workspaceWithKey, type TestServer } from './http-helpers.ts';

type J = Record<string, any>;

let dir: string;
let t: TestServer;
let key: string;

beforeAll(async () => {
  dir = await syntheticSnapshots(500);
  t = await startTestServer(dir, { perKeyPerMinute: 1_000_000, dailyQuota: 1_000_000 });
  key = workspaceWithKey(t.ledger, 1_000_000).key;
});

afterAll(() => {
  t?.close();
  if (dir) removeDir(dir);
});

/** One GET whose request target is `target` byte for byte; the status and the JSON body, read until Content-Length is met (5 s at most). */
function rawGet(target: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; body: J }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(t.server.port, '127.0.0.1');
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no whole answer within 5 s: ${Buffer.concat(chunks).toString('latin1')}`));
    }, 5000);
    socket.once('connect', () => {
      const head = Object.entries({ Host: '127.0.0.1', Connection: 'close', ...headers })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(Buffer.concat([Buffer.from('GET ', 'latin1'), target, Buffer.from(` HTTP/1.1\r\n${head}\r\n`, 'latin1')]));
    });
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      const all = Buffer.concat(chunks);
      const headEnd = all.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = all.subarray(0, headEnd).toString('latin1');
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? NaN);
      if (all.length < headEnd + 4 + length) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        status: Number(head.slice(9, 12)),
        body: JSON.parse(all.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8')) as J,
      });
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
const BBOX = 'bbox=9.4,47.0,9.7,47.3';
const auth = () => ({ Authorization: `Bearer ${key}` });

describe('a query string whose bytes are not UTF-8', () => {
  // 0xFF never occurs in UTF-8; 0xC3 0x28 is a lead byte followed by no continuation; 0xED 0xA0 0x80 encodes a lone surrogate.
  const BAD = [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80]];

  it('is refused raw with 400 invalid_parameter naming the parameter whose value holds it', async () => {
    for (const bad of BAD) {
      const r = await rawGet(bytes(`/v1/buildings?${BBOX}&registered_business_name=B`, bad, 'ckerei'), auth());
      expect(r.status, String(bad)).toBe(400);
      expect(r.body.error.code, String(bad)).toBe('invalid_parameter');
      expect(r.body.error.parameter, String(bad)).toBe('registered_business_name');
      expect(r.body.error.message, String(bad)).toMatch(/UTF-8/);
    }
  });

  it('is refused percent-encoded in the same way', async () => {
    for (const bad of BAD) {
      const encoded = bad.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
      const r = await rawGet(bytes(`/v1/buildings?${BBOX}&registered_business_name=B${encoded}ckerei`), auth());
      expect(r.status, encoded).toBe(400);
      expect(r.body.error, encoded).toMatchObject({ code: 'invalid_parameter', parameter: 'registered_business_name' });
    }
  });

  it('is refused in a parameter name, raw and percent-encoded', async () => {
    for (const name of [bytes('na', [0xff], 'me'), bytes('na%FFme')]) {
      const r = await rawGet(bytes(`/v1/buildings?${BBOX}&`, [...name], '=x'), auth());
      expect(r.status, name.toString('latin1')).toBe(400);
      expect(r.body.error.code, name.toString('latin1')).toBe('invalid_parameter');
      expect(r.body.error.message, name.toString('latin1')).toMatch(/UTF-8/);
    }
  });

  it('is refused on a public page, with the public error body', async () => {
    const country = t.catalog.view().snapshots[0].country;
    for (const path of [
      bytes(`/v1/public/countries/${country}/places?x`, [0xff], '=1'),
      bytes(`/v1/public/places/${country}/`, [0xff], 'x'),
    ]) {
      const r = await rawGet(path);
      expect(r.status, path.toString('latin1')).toBe(400);
      expect(r.body.error, path.toString('latin1')).toBe('invalid_parameter');
      expect(r.body.message, path.toString('latin1')).toMatch(/UTF-8/);
    }
  });

  it('leaves raw UTF-8 read as its percent-encoded form is', async () => {
    const raw = await rawGet(bytes(`/v1/buildings?${BBOX}&registered_business_name=B`, [0xc3, 0xa4], 'ckerei'), auth());
    const encoded = await rawGet(bytes(`/v1/buildings?${BBOX}&registered_business_name=B%C3%A4ckerei`), auth());
    expect(raw.status).toBe(200);
    expect(raw.body).toEqual(encoded.body);
  });
});
