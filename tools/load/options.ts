/**
 * The command line of `npm run loadtest`, in phases: parse (unknown options refused by name,
 * with the nearest known one), validate each value, then refuse conflicting ones, before
 * anything is sent. Every refusal is a `UsageError` (exit code 2) naming the option.
 */
import { readFileSync } from 'node:fs';
import { closest } from '../../src/api/suggest.ts';
import { parseArgsOnce } from '../args.ts';
import { parseBBox } from './discover.ts';
import { DEFAULT_WEIGHTS, formatWeights, parseWeights } from './mix.ts';
import type { LoadOptions } from './run.ts';
import { parseTarget } from './target.ts';

export class UsageError extends Error {
  readonly exitCode = 2;
}

export const LIMITS = { durationS: 3600, requests: 10_000_000, connections: 10_000, threads: 64, rate: 1_000_000 };

export const USAGE = `npm run loadtest -- --keys KEY[,KEY...] [options]

Sends a realistic mix of requests to a running Edifice server and reports requests/s, latency
percentiles, errors by status and code, and credits charged.

  --url URL            API base (default http://127.0.0.1:8080/v1); loopback only unless --allow-remote
  --allow-remote       allow a --url that is not 127.0.0.1 / ::1 / localhost
  --keys K1,K2         API keys, used in turn (or --keys-file FILE, one key a line, # comments)
  --bbox W,S,E,N       the served area (default: the extents GET /public/countries lists)
  --client-addresses N public pages come from N addresses, sent in X-Forwarded-For (0: none);
                       for a server behind EDIFICE_TRUSTED_PROXIES=1, whose /public allows 120 a minute per address
  --max                as fast as possible over --connections connections (the default mode)
  --rate N             N requests/s on a fixed schedule; latency counts from the scheduled time
  --connections N      max mode: connections kept busy (16); rate mode: the most opened (256)
  --duration S         seconds, at most ${LIMITS.durationS} (10; ${LIMITS.durationS} when only --requests is given)
  --requests N         stop after N requests, at most ${LIMITS.requests.toLocaleString('en')}
  --mix K=W,...        weights of ${formatWeights(DEFAULT_WEIGHTS)}
  --seed N             seed of the mix (1)
  --threads N          load threads (1)
  --timeout S          seconds before a request counts as failed (10)
  --json               print the report as JSON
  --help`;

const OPTIONS = {
  url: { type: 'string' },
  'allow-remote': { type: 'boolean' },
  keys: { type: 'string' },
  'keys-file': { type: 'string' },
  bbox: { type: 'string' },
  'client-addresses': { type: 'string' },
  rate: { type: 'string' },
  max: { type: 'boolean' },
  connections: { type: 'string' },
  duration: { type: 'string' },
  requests: { type: 'string' },
  mix: { type: 'string' },
  seed: { type: 'string' },
  threads: { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

export interface Cli {
  options: LoadOptions;
  json: boolean;
  help: boolean;
}

function number(name: string, raw: string | undefined, fallback: number, min: number, max: number, integer: boolean): number {
  if (raw === undefined) return fallback;
  const n = Number(raw.replace(/_/g, ''));
  if (raw.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
    throw new UsageError(
      `--${name}: expected ${integer ? 'a whole number' : 'a number'} from ${min.toLocaleString('en')} to ${max.toLocaleString('en')}, got "${raw}".`,
    );
  }
  return n;
}

function readKeys(values: { keys?: string; 'keys-file'?: string }): string[] {
  if (values.keys !== undefined && values['keys-file'] !== undefined)
    throw new UsageError('--keys and --keys-file: give one of them, not both.');
  let keys: string[];
  if (values['keys-file'] !== undefined) {
    let text: string;
    try {
      text = readFileSync(values['keys-file'], 'utf8');
    } catch (err) {
      throw new UsageError(
        `--keys-file: cannot read "${values['keys-file']}" (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`,
      );
    }
    keys = text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
  } else
    keys = (values.keys ?? '')
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean);
  if (keys.length === 0) throw new UsageError('--keys: give at least one API key (--keys K1,K2 or --keys-file FILE).');
  for (const k of keys) if (/[\s\p{Cc}]/u.test(k)) throw new UsageError('--keys: a key holds a space or control character.');
  return keys;
}

export function parseCli(argv: readonly string[]): Cli {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgsOnce({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (err) {
    const e = err as { code?: string; message: string };
    const m = /'(-{1,2}[^']*)'/.exec(e.message);
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && m) {
      const name = m[1].replace(/^-+/, '');
      const near = closest(name, Object.keys(OPTIONS));
      throw new UsageError(`Unknown option ${m[1]}${near ? `; did you mean --${near}?` : ''} (--help lists them).`);
    }
    throw new UsageError(e.message.split('\n')[0]);
  }
  const v = values as { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'string' ? string : boolean };
  if (v.help) return { options: null as unknown as LoadOptions, json: false, help: true };

  let target;
  try {
    target = parseTarget(v.url ?? 'http://127.0.0.1:8080/v1', v['allow-remote'] === true);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (v.rate !== undefined && v.max) throw new UsageError('--rate and --max: choose one mode (a fixed rate, or as fast as possible).');
  const mode = v.rate !== undefined ? 'rate' : 'max';
  const rate = mode === 'rate' ? number('rate', v.rate, 0, 0.001, LIMITS.rate, false) : null;
  const connections = number('connections', v.connections, mode === 'rate' ? 256 : 16, 1, LIMITS.connections, true);
  const requests = number('requests', v.requests, LIMITS.requests, 1, LIMITS.requests, true);
  const durationS = number('duration', v.duration, v.requests !== undefined ? LIMITS.durationS : 10, 0.1, LIMITS.durationS, false);
  const seed = number('seed', v.seed, 1, 0, 2 ** 31 - 1, true);
  const threads = number('threads', v.threads, 1, 1, LIMITS.threads, true);
  const timeoutMs = number('timeout', v.timeout, 10, 0.001, 600, false) * 1000;
  const clientAddresses = number('client-addresses', v['client-addresses'], 0, 0, 65_536, true);
  if (threads > connections)
    throw new UsageError(`--threads ${threads} with --connections ${connections}: each thread needs a connection.`);
  let weights = DEFAULT_WEIGHTS;
  let bbox = null;
  try {
    if (v.mix !== undefined) weights = parseWeights(v.mix);
    if (v.bbox !== undefined) bbox = parseBBox(v.bbox);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const keys = readKeys(v);
  return {
    options: { target, keys, mode, rate, connections, durationS, requests, weights, seed, threads, timeoutMs, bbox, clientAddresses },
    json: v.json === true,
    help: false,
  };
}
