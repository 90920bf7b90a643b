/**
 * The server's log lines: each event at its real level with a single `level` key, so that
 * EDIFICE_LOG_LEVEL filters them as it says (a refused snapshot is a warning); a rescan that
 * found nothing new and a stop are logged too.
 */
import { copyFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killServerProcesses, removeDir, startServerProcess, syntheticSnapshots, waitForOutput } from './http-helpers.ts';

const dirs: string[] = [];

afterAll(() => {
  killServerProcesses();
  for (const d of dirs) removeDir(d);
});

/**
 * A snapshots folder whose country has a good file and, dated a day later, a copy the catalog
 * refuses (its metadata says the earlier date).
 */
async function withRefusedFile(): Promise<string> {
  const dir = await syntheticSnapshots(1000);
  dirs.push(dir);
  const country = join(dir, 'snapshots', 'XA');
  const [good] = readdirSync(country);
  const next = new Date(Date.parse(good.slice(0, 10)) + 86_400_000).toISOString().slice(0, 10);
  copyFileSync(join(country, good), join(country, `${next}.arrow`));
  return dir;
}

/** The JSON lines of the output, each checked to name its level once. */
function jsonLines(output: string): Record<string, unknown>[] {
  const lines = output.split('\n').filter((l) => l.startsWith('{'));
  for (const line of lines) expect(line.match(/"level":/g), line).toHaveLength(1);
  return lines.map((l) => JSON.parse(l));
}

describe('log levels', () => {
  it('logs a refused snapshot as a warning, shown under EDIFICE_LOG_LEVEL=warn, with one level key', { timeout: 90_000 }, async () => {
    const dir = await withRefusedFile();
    const server = await startServerProcess(
      {
        EDIFICE_SNAPSHOTS: join(dir, 'snapshots'),
        EDIFICE_LEDGER: join(dir, 'ledger.db'),
        EDIFICE_WORKERS: '0',
        EDIFICE_LOG_LEVEL: 'warn',
      },
      [],
    );
    const refused = jsonLines(server.output()).filter((l) => l.event === 'snapshot_refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ level: 40, country: 'XA' });
    expect(jsonLines(server.output()).filter((l) => l.event === 'snapshot_loaded')).toEqual([]);
    server.child.kill('SIGTERM');
  });

  it('logs a loaded snapshot at info, a rescan that found nothing new, and a stop', { timeout: 90_000 }, async () => {
    const dir = await withRefusedFile();
    const server = await startServerProcess(
      {
        EDIFICE_SNAPSHOTS: join(dir, 'snapshots'),
        EDIFICE_LEDGER: join(dir, 'ledger.db'),
        EDIFICE_WORKERS: '0',
        EDIFICE_LOG_LEVEL: 'info',
      },
      [],
    );
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGHUP');
    await waitForOutput(server.output, /"event":"snapshot_rescan"/);
    server.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const lines = jsonLines(server.output());
    expect(lines.filter((l) => l.event === 'snapshot_loaded').map((l) => l.level)).toEqual([30]);
    expect(lines.filter((l) => l.event === 'snapshot_refused').map((l) => l.level)).toEqual([40]);
    // The refused file is not tried again until it changes: the rescan found nothing new.
    expect(lines.filter((l) => l.event === 'snapshot_rescan')).toMatchObject([{ level: 30, loaded: 0, refused: 0, nothingNew: true }]);
    const messages = lines.map((l) => l.msg);
    expect(messages).toContain('stopped');
    expect(messages.indexOf('stopped')).toBeGreaterThan(messages.findIndex((m) => String(m).startsWith('stopping')));
  });
});
