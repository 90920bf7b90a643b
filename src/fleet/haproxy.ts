/**
 * The HAProxy configuration in front of a fleet of replicas on one machine: one frontend on the
 * public port, one backend of the replicas' loopback ports, spread by least connections, each
 * health-checked on /readyz (HTTP/1.1 with a Host header: uWebSockets.js answers nothing else), a
 * replica that fails its checks (stopping, its ledger unreachable, gone) taken out within a second
 * and its connections closed; one that answers nothing for 3 s, twice, too. A request that found
 * a replica gone before an answer is tried again on another (twice at most): a page is never
 * charged twice for it, as a building opened in the last 365 days is free to the same workspace
 * on every replica. With no replica up, HAProxy answers the spec's 503 `unavailable` with
 * Retry-After itself.
 */
/** Seconds a health check waits for a replica's answer. */
const CHECK_TIMEOUT_S = 3;

export interface FleetProxy {
  /** Where clients connect. */
  host: string;
  port: number;
  replicas: readonly { name: string; host: string; port: number }[];
  /** Milliseconds between health checks of a replica. Default 500. */
  checkEveryMs?: number;
  /** The API's path prefix (EDIFICE_BASE_PATH), for the public pages' error format. Default /v1. */
  basePath?: string;
}

/** HAProxy's answer when no replica is up: the spec's 503 in each format, never HAProxy's own page. */
const NO_REPLICA_RETRY_S = 2;
const NO_REPLICA_API = JSON.stringify({
  error: { code: 'unavailable', message: 'No replica can answer right now; retry shortly.', parameter: '' },
});
const NO_REPLICA_PUBLIC = JSON.stringify({ error: 'unavailable' });

const NAME = /^[A-Za-z0-9._-]{1,64}$/;

export function haproxyConfig(proxy: FleetProxy): string {
  if (proxy.replicas.length === 0) throw new RangeError('A fleet needs at least one replica.');
  for (const r of proxy.replicas) {
    if (!NAME.test(r.name)) throw new RangeError(`A replica's name is 1 to 64 letters, digits, '.', '_' or '-', got "${r.name}".`);
    if (!Number.isInteger(r.port) || r.port < 1 || r.port > 65_535)
      throw new RangeError(`Replica ${r.name}: port ${r.port} is not a TCP port.`);
  }
  const every = proxy.checkEveryMs ?? 500;
  return [
    // No global maxconn: HAProxy sizes it from the file descriptors it may open (a fixed one above
    // what the limit allows stops it at start). Its log goes to stdout (proxy.ts keeps the
    // request lines of it: the rest repeats the warnings and alerts of stderr).
    'global',
    '  log stdout format raw local0 info',
    '',
    'defaults',
    '  mode http',
    // One line for each request HAProxy tried again, sent elsewhere, or ended in an error or a 5xx,
    // with its termination state (docs/scaling.md); none for the others.
    '  log global',
    '  option httplog',
    '  option dontlog-normal',
    '  option dontlognull',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout http-keep-alive 10s',
    '  option http-keep-alive',
    // The client's address for the per-address limits (replicas trust one proxy: EDIFICE_TRUSTED_PROXIES=1).
    '  option forwardfor',
    // A request that found its replica gone is tried again on another, twice at most, so that a
    // second failure meanwhile (another replica stopping or starting) still leaves one to answer.
    '  option redispatch 1',
    '  retries 2',
    '  retry-on conn-failure empty-response',
    '',
    'frontend edifice',
    `  bind ${proxy.host}:${proxy.port}`,
    '  acl no_replica nbsrv(replicas) lt 1',
    `  acl public_page path_beg ${proxy.basePath ?? '/v1'}/public/`,
    ...[
      [NO_REPLICA_PUBLIC, ' public_page'],
      [NO_REPLICA_API, ''],
    ].map(
      ([body, only]) =>
        `  http-request return status 503 content-type application/json hdr Retry-After ${NO_REPLICA_RETRY_S} hdr Cache-Control no-store ` +
        `string '${body}' if no_replica${only}`,
    ),
    '  default_backend replicas',
    // HAProxy's own errors: 503 (the last replica ended before its checks failed), and 502 and 504
    // (a request in flight on a replica taken out, or that answered nothing) as the spec's 503,
    // never HAProxy's HTML page. Replicas never answer 502 or 504 themselves.
    ...[502, 503, 504].map(
      (status) =>
        `  http-error status ${status} content-type application/json hdr Retry-After ${NO_REPLICA_RETRY_S} hdr Cache-Control no-store ` +
        `string '${NO_REPLICA_API}'`,
    ),
    '  http-after-response set-status 503 if { status 502 } || { status 504 }',
    '',
    'backend replicas',
    '  balance leastconn',
    '  option httpchk',
    '  http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host edifice',
    '  http-check expect status 200',
    // A check waits up to CHECK_TIMEOUT for its answer (without it, `inter`): a replica that answers
    // 503 or refuses is out within a second, but one stalled a moment (GC, a starved machine) is
    // not, since every replica stalls together when the machine does and none would be left.
    `  timeout check ${CHECK_TIMEOUT_S}s`,
    `  default-server inter ${every}ms fastinter ${every}ms downinter ${every}ms fall 2 rise 2 on-marked-down shutdown-sessions`,
    ...proxy.replicas.map((r) => `  server ${r.name} ${r.host}:${r.port} check`),
    '',
  ].join('\n');
}
