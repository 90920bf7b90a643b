/**
 * Where the load goes: the API base URL, refused unless it is on this machine's loopback or the
 * operator said `--allow-remote`. A load test aimed at the wrong host is an attack on someone
 * else's server, so the check is made before any connection.
 */
import { isIPv6 } from 'node:net';

export interface Target {
  /** The URL as given, without a trailing slash. */
  url: string;
  /** Address to connect to. */
  host: string;
  port: number;
  /** Host header value. */
  hostHeader: string;
  /** Path prefix of the API (e.g. /v1); '' for the root. */
  base: string;
  loopback: boolean;
}

export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)) return h.split('.').every((o) => Number(o) <= 255);
  return /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Parses and checks `--url`; throws RangeError with a message naming the option. */
export function parseTarget(raw: string, allowRemote: boolean): Target {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new RangeError(`--url: expected an absolute http URL like http://127.0.0.1:8080/v1, got "${raw}".`);
  }
  if (u.protocol !== 'http:')
    throw new RangeError(`--url: only http:// is supported (put a TLS terminator's plain side here), got "${u.protocol}".`);
  if (u.search || u.hash) throw new RangeError(`--url: give the API base without a query or fragment, got "${raw}".`);
  const loopback = isLoopback(u.hostname);
  if (!loopback && !allowRemote) {
    throw new RangeError(
      `--url: ${u.hostname} is not a loopback address; a load test goes to 127.0.0.1/::1 unless --allow-remote is given.`,
    );
  }
  const bare = u.hostname.replace(/^\[|\]$/g, '');
  // localhost may resolve to ::1 while the server listens on 127.0.0.1 only.
  const host = bare.toLowerCase() === 'localhost' ? '127.0.0.1' : bare;
  const port = u.port ? Number(u.port) : 80;
  const base = u.pathname.replace(/\/+$/, '');
  return {
    url: `${u.protocol}//${u.host}${base}`,
    host,
    port,
    base,
    loopback,
    hostHeader: isIPv6(bare) ? `[${bare}]:${port}` : `${bare}:${port}`,
  };
}
