/**
 * The ceiling for Edifice's own answers on this stack: the same uWebSockets.js package answering
 * each request with the next of Edifice's recorded answers to the mix (`record.ts`: status,
 * headers and body as Edifice sent them), in the recorded order, whatever was asked. No query, no
 * key, no ledger, no log: only the bytes. Prints `listening <port>`.
 *
 * `node --import tsx bench/http/replay-server.ts <recording> [port]`
 */
import { STATUS_CODES } from 'node:http';
import { readFileSync } from 'node:fs';
import { deserialize } from 'node:v8';
import { uws, uwsImplementation } from '../../src/http/uws.ts';
import type { Recorded } from './record.ts';

const answers = deserialize(readFileSync(process.argv[2])) as Recorded[];
if (answers.length === 0) throw new Error(`replay-server: ${process.argv[2]} holds no answer`);
const statusLines = answers.map((a) => `${a.status} ${STATUS_CODES[a.status] ?? ''}`);
const port = Number(process.argv[3] ?? 0);
let turn = 0;

const app = uws.App();
app.any('/*', (res) => {
  const k = turn;
  turn = turn + 1 === answers.length ? 0 : turn + 1;
  const a = answers[k];
  res.cork(() => {
    res.writeStatus(statusLines[k]);
    for (const [name, value] of a.headers) res.writeHeader(name, value);
    res.end(a.body);
  });
});
app.listen('127.0.0.1', port, (socket) => {
  if (!socket) throw new Error(`replay-server: cannot listen on 127.0.0.1:${port}`);
  process.stdout.write(`listening ${uws.us_socket_local_port(socket)} (uWebSockets.js ${uwsImplementation}; ${answers.length} answers)\n`);
});
process.once('SIGTERM', () => process.exit(0));
