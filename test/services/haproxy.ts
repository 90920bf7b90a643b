/** A throwaway HAProxy for tests: Debian's haproxy in the foreground, on a configuration written to a temporary folder. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haproxyBinary } from '../../src/fleet/proxy.ts';

export interface TestHaproxy {
  /** What HAProxy has written so far, stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

/** Checks `config` with `haproxy -c`; throws with HAProxy's words when it is refused. */
export function checkHaproxyConfig(config: string): void {
  const dir = mkdtempSync(join(tmpdir(), 'edifice-haproxy-'));
  try {
    writeFileSync(join(dir, 'haproxy.cfg'), config);
    execFileSync(haproxyBinary(), ['-c', '-f', join(dir, 'haproxy.cfg')], { stdio: 'pipe' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts HAProxy on `config`; resolves once `port` accepts connections (10 s at most). */
export async function startHaproxy(config: string, port: number): Promise<TestHaproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'edifice-haproxy-'));
  writeFileSync(join(dir, 'haproxy.cfg'), config);
  const child: ChildProcess = spawn(haproxyBinary(), ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  for (let i = 0; i < 200; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.end();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (up) break;
    if (exited || i === 199) throw new Error(`haproxy did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve(rmSync(dir, { recursive: true, force: true }));
        child.once('exit', () => resolve(rmSync(dir, { recursive: true, force: true })));
        child.kill('SIGTERM');
      }),
  };
}
