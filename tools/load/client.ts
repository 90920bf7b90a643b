/**
 * A minimal HTTP/1.1 client connection for load generation: one keep-alive socket, one request
 * in flight (no pipelining), responses framed by Content-Length, chunked encoding or the close
 * of the connection. It reads only what a load report needs: the status, `X-Credits-Charged`,
 * and the body when the caller asks for it or the status is not 2xx (error codes).
 *
 * Why not node:http or fetch: the load generator shares a 2-core machine with the server, so its
 * cost per request is cost taken from the server, and this client costs a fraction of theirs
 * (bench/README.md, The harness).
 *
 * No closure is made per request: a Connection calls its one `ResponseSink` with itself and the
 * caller's per-request state given to `send`.
 */
import { Socket } from 'node:net';

export interface ResponseSink<T> {
  /** A whole response; `body` is null unless asked for or the status is not 2xx. */
  onResponse(conn: Connection<T>, pending: T, status: number, credits: number, body: Buffer | null): void;
  /** The request failed without a response (`code`: connect, reset, timeout, protocol). */
  onFailure(conn: Connection<T>, pending: T, code: string): void;
}

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
/** A response head larger than this is a protocol error, not something to buffer forever. */
const MAX_HEAD = 64 * 1024;
/**
 * A connection idle longer than this is closed and a new one opened for the next request, as
 * HTTP clients do (undici's default keep-alive timeout is 4 s): servers close idle connections
 * (uWebSockets.js after 10 s), and a request written as the server's close is on its way meets
 * a reset, which the report would count against the server.
 */
export const IDLE_REUSE_MS = 4_000;

const enum State {
  Idle,
  Head,
  Body,
  ChunkSize,
  ChunkData,
  ChunkEnd,
  Trailer,
  UntilClose,
}

export class Connection<T> {
  /** The caller's state of the request in flight; null when idle. */
  private pending: T | null = null;
  /** performance.now() when the request was written. */
  sentAt = 0;
  /** Bytes received over this connection's life (heads included). */
  bytesRead = 0;
  private socket: Socket | null = null;
  private state = State.Idle;
  private carry: Buffer | null = null;
  private remaining = 0;
  private status = 0;
  private credits = 0;
  private keepBody = false;
  private wantBody = false;
  private closeAfter = false;
  private parts: Buffer[] = [];
  /** performance.now() when the last response ended. */
  private idleSince = 0;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly sink: ResponseSink<T>,
    private readonly idleReuseMs = IDLE_REUSE_MS,
  ) {}

  get busy(): boolean {
    return this.pending !== null;
  }

  /** Writes one request (`head` is the whole request head, ending in an empty line). */
  send(head: string, pending: T, wantBody: boolean): void {
    if (this.pending !== null) throw new Error('Connection.send: a request is already in flight on this connection.');
    const now = performance.now();
    if (this.socket !== null && now - this.idleSince > this.idleReuseMs) this.drop();
    this.pending = pending;
    this.wantBody = wantBody;
    this.state = State.Head;
    this.carry = null;
    this.sentAt = now;
    if (this.socket === null || this.socket.destroyed) this.open();
    this.socket!.write(head, 'latin1');
  }

  /** Drops the request in flight (if any) as failed with `code`, and the socket with it. */
  abort(code: string): void {
    this.drop();
    this.fail(code);
  }

  close(): void {
    this.pending = null;
    this.drop();
  }

  private open(): void {
    const s = new Socket();
    s.setNoDelay(true);
    s.on('data', (d: Buffer) => this.onData(d));
    s.on('error', (err: NodeJS.ErrnoException) => this.onClosed(err.code === 'ECONNREFUSED' ? 'connect' : 'reset'));
    s.on('close', () => this.onClosed('reset'));
    s.connect(this.port, this.host);
    this.socket = s;
  }

  private drop(): void {
    const s = this.socket;
    this.socket = null;
    this.state = State.Idle;
    this.carry = null;
    this.parts = [];
    if (s) {
      s.removeAllListeners('data');
      s.removeAllListeners('close');
      // Errors after a deliberate drop are of no interest, but must not be unhandled.
      s.removeAllListeners('error').on('error', () => {});
      s.destroy();
    }
  }

  private onClosed(code: string): void {
    if (this.state === State.UntilClose) {
      // A response without length ends with the connection.
      this.socket = null;
      this.finish();
      return;
    }
    this.drop();
    if (this.pending !== null) this.fail(code);
  }

  private fail(code: string): void {
    const pending = this.pending;
    if (pending === null) return;
    this.pending = null;
    this.sink.onFailure(this, pending, code);
  }

  private protocolError(): void {
    this.drop();
    this.fail('protocol');
  }

  private onData(d: Buffer): void {
    this.bytesRead += d.length;
    let buf = d;
    if (this.carry !== null) {
      buf = Buffer.concat([this.carry, d]);
      this.carry = null;
    }
    let pos = 0;
    const n = buf.length;
    while (pos < n) {
      switch (this.state) {
        case State.Idle:
          // Bytes nobody asked for: the server is confused; start afresh.
          this.drop();
          return;
        case State.Head: {
          const end = this.find(buf, pos, HEAD_END);
          if (end < 0) return;
          if (!this.readHead(buf.toString('latin1', pos, end))) return this.protocolError();
          pos = end + 4;
          if ((this.state as State) === State.Idle) {
            // A response without a body (204, 304) or an interim 1xx handled in readHead.
            if (this.status >= 200) this.finish();
          }
          break;
        }
        case State.Body:
        case State.ChunkData: {
          const take = Math.min(this.remaining, n - pos);
          if (this.keepBody) this.parts.push(buf.subarray(pos, pos + take));
          this.remaining -= take;
          pos += take;
          if (this.remaining === 0) {
            if (this.state === State.Body) this.finish();
            else this.state = State.ChunkEnd;
          }
          break;
        }
        case State.ChunkEnd:
        case State.ChunkSize:
        case State.Trailer: {
          const eol = this.find(buf, pos, CRLF);
          if (eol < 0) return;
          const line = buf.toString('latin1', pos, eol);
          pos = eol + 2;
          if (this.state === State.ChunkEnd) {
            if (line !== '') return this.protocolError();
            this.state = State.ChunkSize;
          } else if (this.state === State.ChunkSize) {
            const semi = line.indexOf(';');
            const size = parseInt(semi < 0 ? line : line.slice(0, semi), 16);
            if (!(size >= 0)) return this.protocolError();
            if (size === 0) this.state = State.Trailer;
            else {
              this.remaining = size;
              this.state = State.ChunkData;
            }
          } else if (line === '') this.finish();
          break;
        }
        case State.UntilClose:
          if (this.keepBody) this.parts.push(buf.subarray(pos));
          pos = n;
          break;
      }
    }
  }

  /**
   * Where `delim` is in `buf` from `pos`; -1 when it has not arrived yet (the rest is kept for
   * the next chunk) or never will (more than MAX_HEAD bytes without it: a protocol error).
   */
  private find(buf: Buffer, pos: number, delim: Buffer): number {
    const at = buf.indexOf(delim, pos);
    if (at >= 0) return at;
    if (buf.length - pos > MAX_HEAD) this.protocolError();
    else this.carry = buf.subarray(pos);
    return -1;
  }

  /** Parses a response head; sets the state for its body. False on a malformed head. */
  private readHead(head: string): boolean {
    // "HTTP/1.1 200 OK"
    if (!head.startsWith('HTTP/1.')) return false;
    const status = Number(head.slice(9, 12));
    if (!(status >= 100 && status <= 599)) return false;
    this.status = status;
    if (status < 200) {
      // Interim response: the real one follows.
      this.state = State.Head;
      return true;
    }
    let length = -1;
    let chunked = false;
    let credits = 0;
    let close = head.startsWith('HTTP/1.0');
    let at = head.indexOf('\r\n');
    while (at >= 0) {
      const next = head.indexOf('\r\n', at + 2);
      const line = next < 0 ? head.slice(at + 2) : head.slice(at + 2, next);
      at = next;
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      // Compare lowercased names only for the few headers read, by their length first.
      const nameLength = colon;
      if (nameLength !== 14 && nameLength !== 17 && nameLength !== 10) continue;
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'content-length') length = Number(value);
      else if (name === 'transfer-encoding') chunked = value.toLowerCase().endsWith('chunked');
      else if (name === 'connection') close = value.toLowerCase() === 'close';
      else if (name === 'x-credits-charged') credits = Number(value) || 0;
    }
    this.credits = credits;
    this.closeAfter = close;
    this.keepBody = this.wantBody || status >= 300;
    this.parts = [];
    if (status === 204 || status === 304) this.state = State.Idle;
    else if (chunked) this.state = State.ChunkSize;
    else if (length >= 0) {
      if (!Number.isSafeInteger(length)) return false;
      this.remaining = length;
      this.state = length === 0 ? State.Idle : State.Body;
    } else this.state = State.UntilClose;
    return true;
  }

  private finish(): void {
    const parts = this.parts;
    const body = !this.keepBody ? null : parts.length === 1 ? parts[0] : Buffer.concat(parts);
    this.parts = [];
    this.state = State.Idle;
    this.idleSince = performance.now();
    if (this.closeAfter) this.drop();
    const pending = this.pending;
    if (pending === null) return;
    // Cleared first: the sink usually sends the next request on this connection at once.
    this.pending = null;
    this.sink.onResponse(this, pending, this.status, this.credits, body);
  }
}
