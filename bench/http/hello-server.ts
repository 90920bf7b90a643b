/**
 * The ceiling of this stack for `bench:http`: the same uWebSockets.js package as Edifice,
 * answering every path with one fixed small JSON body, nothing else. Prints `listening <port>`.
 */
import { uws, uwsImplementation } from '../../src/http/uws.ts';

const BODY = Buffer.from('{"data":[],"hello":"world"}');
const port = Number(process.argv[2] ?? 0);
const app = uws.App();
app.any('/*', (res) => {
  res.cork(() => {
    res.writeHeader('Content-Type', 'application/json');
    res.end(BODY);
  });
});
app.listen('127.0.0.1', port, (socket) => {
  if (!socket) throw new Error(`hello-server: cannot listen on 127.0.0.1:${port}`);
  process.stdout.write(`listening ${uws.us_socket_local_port(socket)} (uWebSockets.js ${uwsImplementation})\n`);
});
process.once('SIGTERM', () => process.exit(0));
