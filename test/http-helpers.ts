/**
 * A real Edifice server for integration tests: a synthetic snapshot written by the real
 * generator, a real ledger file, the real uWebSockets.js app on 127.0.0.1 (port chosen by the OS),
 * and a validator of live responses against the served OpenAPI document.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pino from 'pino';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { Catalog } from '../src/catalog/catalog.ts';
import { Ledger, type LedgerOptions } from '../src/ledger/index.ts';
import { loadConfig } from '../src/config.ts';
import { startServer, type RunningServer } from '../src/http/server.ts';
import { startMetricsServer } from '../src/http/metrics-server.ts';
import { writeSyntheticCountry } from '../src/synth/generate.ts';

export interface TestServer {
  url: string;
  /** The operator port's origin: `${metricsUrl}/metrics`. */
  metricsUrl: string;
  base: string;
  dir: string;
  catalog: Catalog;
  ledger: Ledger;
  server: RunningServer;
  close(): void;
}

/** Writes a small synthetic country once per folder; returns its snapshots folder. */
export async function syntheticSnapshots(buildings = 4000, seed = 7, country = 'XA'): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'edifice-http-'));
  await writeSyntheticCountry({ seed, buildings, country, bounds: [9.4, 47.0, 9.7, 47.3], outDir: join(dir, 'snapshots') });
  return dir;
}

/** A real server on 127.0.0.1; `env` sets configuration as the EDIFICE_* variables would. */
export async function startTestServer(
  dir: string,
  ledgerOptions: LedgerOptions = {},
  ledgerFile = 'ledger.db',
  env: NodeJS.ProcessEnv = {},
): Promise<TestServer> {
  const config = { ...loadConfig(env), port: 0, snapshotsDir: join(dir, 'snapshots'), ledgerPath: join(dir, ledgerFile) };
  const catalog = Catalog.open(config.snapshotsDir);
  const ledger = Ledger.open(config.ledgerPath, ledgerOptions);
  const log = pino({ level: 'silent' });
  const server = await startServer({ config, catalog, ledger, log, now: ledgerOptions.now });
  const metrics = await startMetricsServer('127.0.0.1', 0, () => server.metrics.registry.metrics(), log);
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    metricsUrl: `http://127.0.0.1:${metrics.port}`,
    base: `${url}/v1`,
    dir,
    catalog,
    ledger,
    server,
    close() {
      void metrics.close();
      server.close();
      ledger.close();
    },
  };
}

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** tsx's loader by its path, so that a server started in another folder finds it. */
export const TSX_LOADER = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const serverProcesses: ChildProcess[] = [];

/** Every server process the tests start, so that afterAll can kill those still running. */
export function trackServerProcess(child: ChildProcess): ChildProcess {
  serverProcesses.push(child);
  return child;
}

/**
 * Starts the server as `npm start` does (bin/start.mjs: src/main.ts bundled), in a process of its own on a free port (with Node's
 * `flags`; EDIFICE_LOG_LEVEL warn unless `env` says otherwise; in `cwd`, by default the project's
 * folder); resolves with its base URL once it listens.
 */
export function startServerProcess(
  env: NodeJS.ProcessEnv,
  flags: string[],
  cwd = ROOT,
): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const child = spawn(process.execPath, [...flags, join(ROOT, 'bin/start.mjs')], {
    cwd,
    env: { ...process.env, EDIFICE_LOG_LEVEL: 'warn', EDIFICE_METRICS_PORT: '0', ...env, EDIFICE_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  serverProcesses.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on [^\s]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, base: `http://127.0.0.1:${m[1]}/v1`, output: () => out });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
}

/** Resolves once `output()` matches `pattern`; fails after 30 s with the output seen. */
export function waitForOutput(output: () => string, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const look = () => {
      if (pattern.test(output())) resolve();
      else if (Date.now() - started > 30_000) reject(new Error(`no ${pattern} in: ${output()}`));
      else setTimeout(look, 50);
    };
    look();
  });
}

/** Kills every server process the tests started that is still running (afterAll). */
export function killServerProcesses(): void {
  for (const c of serverProcesses) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

export interface JsonAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** GET origin + path on a new connection (Connection: close), so that requests to a pool of workers land on either; at most 10 s. */
/** `localAddress`: the loopback address to send from (any of 127.0.0.0/8), for a client address of its own. */
export function getFresh(origin: string, path: string, headers: Record<string, string> = {}, localAddress?: string): Promise<JsonAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}${path}`, { headers: { ...headers, Connection: 'close' }, agent: false, localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : null });
      });
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${path}: no answer in 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** A workspace with `credits` bought credits (beyond the welcome 5) and a key of its creator. */
export function workspaceWithKey(ledger: Ledger, credits: number, name = 'test'): { workspaceId: string; key: string; keyId: string } {
  const email = `${name}-${Math.random().toString(36).slice(2)}@example.com`;
  const { workspaceId } = ledger.createWorkspace(name, { createdBy: email });
  if (credits > 0) ledger.grantCredits(workspaceId, credits, { kind: 'bought' });
  const { key, keyId } = ledger.createKey(workspaceId, email);
  return { workspaceId, key, keyId };
}

type J = Record<string, any>;

/** Checks live responses against the OpenAPI document the server itself serves. */
export class ResponseValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: J) {
    this.ajv.addFormat('date', /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/);
    this.ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
    this.ajv.addFormat('uri', /^https?:\/\/[^\s]+$/);
    this.ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    this.ajv.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
    const defs = JSON.parse(
      JSON.stringify(doc.components.schemas).replaceAll('#/components/schemas/', 'https://edifice.test/live#/$defs/'),
    );
    this.ajv.addSchema({ $id: 'https://edifice.test/live', $defs: defs });
  }

  private resolve<T = J>(o: J): T {
    let x = o;
    while (x && typeof x.$ref === 'string') {
      const parts = x.$ref.replace(/^#\//, '').split('/');
      x = parts.reduce((acc: J, p: string) => acc[p], this.doc);
    }
    return x as T;
  }

  /** Problems of one response: undeclared status, body not matching its schema, missing required header. */
  problems(path: string, status: number, headers: Headers, body: unknown, method = 'get'): string[] {
    const op = this.doc.paths[path]?.[method];
    if (!op) return [`no ${method.toUpperCase()} ${path} in the document`];
    const declared = op.responses[String(status)];
    if (!declared) return [`status ${status} is not declared for ${method.toUpperCase()} ${path}`];
    const response = this.resolve(declared);
    const out: string[] = [];
    for (const [name, h] of Object.entries<J>(response.headers ?? {})) {
      const header = this.resolve(h);
      if (header.required && !headers.has(name)) out.push(`header ${name} missing on ${status} ${path}`);
    }
    // The schema of the answer's media type (GeoJSON, MessagePack decoded), else the JSON one.
    const type = (headers.get('content-type') ?? '').split(';')[0].trim();
    const schema = response.content?.[type]?.schema ?? response.content?.['application/json']?.schema;
    if (schema) {
      const key = JSON.stringify(schema);
      let v = this.compiled.get(key);
      if (!v) {
        const rewritten = JSON.parse(key.replaceAll('#/components/schemas/', 'https://edifice.test/live#/$defs/'));
        v = this.ajv.compile(rewritten);
        this.compiled.set(key, v);
      }
      if (!v(body)) out.push(`${status} ${path}: ${this.ajv.errorsText(v.errors)}`);
    }
    return out;
  }
}
