/**
 * The operator port: `GET /metrics` (Prometheus text) on its own address, loopback by default
 * (EDIFICE_METRICS_HOST, EDIFICE_METRICS_PORT), never on the API port. A scrape now and then
 * needs nothing of uWebSockets.js: node:http serves it, and listens exclusively (a taken port
 * fails the start).
 */
import { createServer } from 'node:http';
import type { Logger } from 'pino';
import { portRefusal, PortTakenError } from './port.ts';

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** Serves `text()` at GET (and HEAD) /metrics on host:port (0: any free port); rejects with a PortTakenError when it cannot listen. */
export function startMetricsServer(
  host: string,
  port: number,
  text: () => Promise<string>,
  log: Pick<Logger, 'error'>,
): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: the operator port serves /metrics alone.\n');
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end('Method not allowed.\n');
    } else {
      text().then(
        (body) => {
          res.writeHead(200, { 'Content-Type': CONTENT_TYPE }).end(req.method === 'HEAD' ? undefined : body);
        },
        (err: unknown) => {
          log.error({ err }, 'metrics failed');
          res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Metrics failed; see the log.\n');
        },
      );
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      void portRefusal(host, port, 'EDIFICE_METRICS_PORT').then((refusal) =>
        reject(new PortTakenError(refusal ?? `Cannot listen on ${host}:${port} for /metrics (${err.code ?? err.message}).`)),
      );
    });
    server.listen(port, host, () => {
      const { port: bound } = server.address() as { port: number };
      resolve({
        port: bound,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
