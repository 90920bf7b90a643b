/**
 * The client address a per-address limit counts under (DESIGN "Limits"): the socket's peer, or,
 * behind `trustedProxies` reverse proxies, the X-Forwarded-For entry that many places from the
 * right (each proxy appends the address it received the request from, so entries further left
 * were written by the client and cannot be trusted). IPv6 clients are grouped by /56.
 */
import { isIP } from 'node:net';
import { clientBucket } from '../ledger/index.ts';

/** An address as a proxy may write it: bare, `1.2.3.4:5678`, or `[2001:db8::1]:5678`. */
function bare(entry: string): string {
  const e = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(e);
  if (bracketed) return bracketed[1];
  const v4port = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(e);
  return v4port ? v4port[1] : e;
}

export function clientAddress(peer: string, forwardedFor: string, trustedProxies: number): string {
  if (trustedProxies === 0 || forwardedFor.trim() === '') return clientBucket(peer);
  const entries = forwardedFor
    .split(',')
    .map(bare)
    .filter((e) => e !== '');
  if (entries.length === 0) return clientBucket(peer);
  // Fewer entries than proxies: the leftmost is the nearest to the client we have.
  const chosen = entries[Math.max(0, entries.length - trustedProxies)];
  return isIP(chosen) ? clientBucket(chosen) : clientBucket(peer);
}
