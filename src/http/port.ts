/**
 * One server per port. uWebSockets.js sets SO_REUSEPORT on every listening socket but those
 * asked to be exclusive, so a second server on a taken port would start without a word and the
 * kernel would split the connections between the two (every limit doubled). A server on the
 * main thread listens exclusively; the worker threads of a pool must share their port, so the
 * pool first binds it exclusively (refused if anyone listens there) and at once holds it with a
 * shared socket of its own until its workers listen (holdPort).
 */
import { createServer } from 'node:net';
import type { us_listen_socket } from 'uWebSockets.js';
import { listenOn, uws } from './uws.ts';

export class PortTakenError extends Error {
  override name = 'PortTakenError';
}

/** Why `host:port` cannot be listened on, in one line, from the system's own error (node:net reports its code). */
export function portRefusal(host: string, port: number, variable = 'EDIFICE_PORT'): Promise<string | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      resolve(
        err.code === 'EADDRINUSE'
          ? `Port ${port} on ${host} is taken: another process listens there (stop it, or set ${variable}).`
          : `Cannot listen on ${host}:${port} (${err.code ?? err.message}); set ${variable.replace(/PORT$/, 'HOST')} or ${variable}.`,
      ),
    );
    probe.listen(port, host, () => probe.close(() => resolve(null)));
  });
}

/** Throws PortTakenError when `host:port` cannot be listened on (a check before a long start; the listen decides). */
export async function assertPortFree(host: string, port: number, variable = 'EDIFICE_PORT'): Promise<void> {
  if (port === 0) return;
  const refusal = await portRefusal(host, port, variable);
  if (refusal !== null) throw new PortTakenError(refusal);
}

/** The error of a listen that failed, with the reason when the system gives one. */
export async function listenFailure(host: string, port: number): Promise<PortTakenError> {
  return new PortTakenError((port === 0 ? null : await portRefusal(host, port)) ?? `Cannot listen on ${host}:${port}.`);
}

export interface HeldPort {
  port: number;
  /** Lets the port go (once the workers listen on it). */
  release(): void;
}

/**
 * Binds `host:port` exclusively (port 0: a free one), which fails when anyone listens there, then
 * in the same turn binds it again with SO_REUSEPORT and keeps that socket until release(): no
 * other server can take the port while the workers start, and the workers can share it. A
 * connection that reaches the held socket meanwhile is answered 503 and closed.
 */
export async function holdPort(host: string, port: number): Promise<HeldPort> {
  const probe = uws.App();
  let exclusive: us_listen_socket | false = false;
  // uWS calls back within listen(): the two binds below happen in one turn, with nothing between.
  listenOn(probe, host, port, true, (s) => {
    exclusive = s;
  });
  if (!exclusive) throw await listenFailure(host, port);
  const bound = uws.us_socket_local_port(exclusive);
  uws.us_listen_socket_close(exclusive);
  const holder = uws.App().any('/*', (res) => {
    res.cork(() =>
      res
        .writeStatus('503 Service Unavailable')
        .writeHeader('Retry-After', '1')
        .writeHeader('Content-Type', 'application/json')
        .end('{"error":{"code":"unavailable","message":"The server is starting; retry shortly.","parameter":""}}', true),
    );
  });
  let held: us_listen_socket | false = false;
  listenOn(holder, host, bound, false, (s) => {
    held = s;
  });
  if (!held) throw await listenFailure(host, bound);
  const socket: us_listen_socket = held;
  return {
    port: bound,
    release() {
      uws.us_listen_socket_close(socket);
      (holder as unknown as { close(): void }).close();
    },
  };
}
