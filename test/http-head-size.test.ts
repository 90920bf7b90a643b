/**
 * The size of a request head the server answers, as docs/operating.md gives it to client authors:
 * any head up to 4,096 bytes, however it arrives; a longer one only when it arrives in one read. Over a
 * network a head arrives in segments of about 1.4 KB, written here as separate writes.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startTestServer, syntheticSnapshots, workspaceWithKey, type TestServer } from './http-helpers.ts';

let dir: string;
let t: TestServer;
let key: string;

beforeAll(async () => {
  dir = await syntheticSnapshots(500);
  t = await startTestServer(dir);
  key = workspaceWithKey(t.ledger, 1000).key;
});

afterAll(() => {
  t?.close();
  if (dir) removeDir(dir);
});

/** A GET /buildings head of `bytes` bytes, padded by an unknown parameter (a 400 is an answer); its status line, or null if closed. */
function send(bytes: number, segment: number): Promise<string | null> {
  const { port } = new URL(t.base);
  const start = `GET /v1/buildings?bbox=9.5,47.1,9.52,47.12&pad=`;
  const end = ` HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`;
  const head = start + 'x'.repeat(bytes - start.length - end.length) + end;
  expect(head.length).toBe(bytes);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer and no close in 15 s for a head of ${bytes} bytes`));
    }, 15_000);
    const done = (line: string | null): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(line);
    };
    socket.on('data', (d) => {
      got += d.toString('latin1');
      if (got.includes('\r\n')) done(got.split('\r\n')[0]);
    });
    socket.on('error', () => done(null));
    socket.on('close', () => done(got === '' ? null : got.split('\r\n')[0]));
    socket.on('connect', async () => {
      for (let i = 0; i < head.length; i += segment) {
        socket.write(head.slice(i, i + segment));
        // Apart in time, so that the server reads them apart.
        if (segment < head.length) await new Promise((r) => setTimeout(r, 5));
      }
    });
  });
}

describe('request heads', () => {
  it('up to 4,096 bytes are answered in segments of 1.4 KB; longer ones only when they arrive at once', async () => {
    for (const bytes of [1000, 3000, 4096]) expect([bytes, await send(bytes, 1400)]).toEqual([bytes, 'HTTP/1.1 400 Bad Request']);
    for (const bytes of [4097, 8000]) {
      expect([bytes, await send(bytes, 1400)]).toEqual([bytes, null]);
      expect([bytes, await send(bytes, bytes)]).toEqual([bytes, 'HTTP/1.1 400 Bad Request']);
    }
  });
});
