/**
 * Streams an answer record by record: a chunk of about CHUNK_BYTES is written, and the next one
 * only once the socket has taken it (uWebSockets.js's backpressure), so an export of 10,000
 * buildings holds one chunk in memory, not the whole answer.
 */
import type { HttpResponse } from 'uWebSockets.js';
import { ByteWriter } from '../api/index.ts';

const CHUNK_BYTES = 64 * 1024;

export interface RecordStream {
  /** Records to write. */
  count: number;
  /** Bytes before the first record (a CSV header), or empty. */
  head: Uint8Array;
  /** Writes record i, its separators included. */
  write(i: number, w: ByteWriter): void;
}

/**
 * Writes status and headers, then every record, then ends the response; `done(completed)` is
 * called once, with false when the client went away first. The caller must not answer `res`
 * otherwise.
 */
export function streamRecords(
  res: HttpResponse,
  status: string,
  headers: Record<string, string>,
  stream: RecordStream,
  closeConnection: boolean,
  done: (completed: boolean, bytes: number) => void,
): void {
  const w = new ByteWriter(CHUNK_BYTES + 16 * 1024);
  let next = 0;
  let bytes = 0;
  let aborted = false;
  let finished = false;
  const finish = (completed: boolean) => {
    if (finished) return;
    finished = true;
    done(completed, bytes);
  };
  res.onAborted(() => {
    aborted = true;
    finish(false);
  });

  const pump = (): void => {
    while (!aborted) {
      w.reset();
      if (next === 0 && bytes === 0) w.bytes(stream.head);
      while (next < stream.count && w.length < CHUNK_BYTES) stream.write(next++, w);
      const last = next >= stream.count;
      let sent = true;
      res.cork(() => {
        if (last) {
          res.end(w.view(), closeConnection);
        } else {
          sent = res.write(w.view());
        }
      });
      bytes += w.length;
      if (last) return finish(true);
      // Not all taken: uWS keeps the rest, and says when the socket can take more.
      if (!sent) {
        res.onWritable(() => {
          pump();
          return true;
        });
        return;
      }
    }
  };

  res.cork(() => {
    res.writeStatus(status);
    for (const name in headers) res.writeHeader(name, headers[name]);
  });
  pump();
}
