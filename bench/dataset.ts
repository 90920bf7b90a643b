/**
 * The bench's data: one seeded synthetic country, generated once into the cache folder
 * (`.cache/bench/synth-seed<S>-<N>/<CC>/<YYYY-MM-DD>.arrow`, gitignored) and reused while the
 * seed and size stay the same. Generation runs in a child process, into a `.partial` folder
 * renamed into place when complete, so an interrupted run never leaves a half cache.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));

/** Every `<dir>/<CC>/<YYYY-MM-DD>.arrow`, the newest per country. */
export function snapshotFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const cc of readdirSync(dir).sort()) {
    if (!/^[A-Z]{2}$/.test(cc) || !statSync(join(dir, cc)).isDirectory()) continue;
    const files = readdirSync(join(dir, cc))
      .filter((f) => /^\d{4}-\d{2}-\d{2}\.arrow$/.test(f))
      .sort();
    if (files.length > 0) out.push(join(dir, cc, files[files.length - 1]));
  }
  return out;
}

export async function ensureSynthetic(cacheDir: string, seed: number, buildings: number, log: (msg: string) => void): Promise<string> {
  const dir = resolve(cacheDir, `synth-seed${seed}-${buildings}`);
  if (snapshotFiles(dir).length > 0) {
    log(`dataset: reusing ${relative(process.cwd(), dir)}`);
    return dir;
  }
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  log(`dataset: generating ${buildings.toLocaleString('en')} buildings (seed ${seed}) into ${relative(process.cwd(), dir)}`);
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [
      '--max-old-space-size=16384',
      '--import',
      'tsx',
      join(HERE, 'generate.ts'),
      '--seed',
      String(seed),
      '--buildings',
      String(buildings),
      '--out',
      partial,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    out += s;
  });
  const code: number = await new Promise((res, rej) => child.on('error', rej).on('exit', (c) => res(c ?? 1)));
  if (code !== 0) throw new Error(`dataset: the generator exited with code ${code}`);
  const result = JSON.parse(out.trim().split('\n').pop()!) as { path: string; rows: number; bytes: number };
  // The catalog layout is <dir>/<CC>/<date>.arrow: put the file there if the generator did not.
  if (snapshotFiles(partial).length === 0) {
    const cc = /^[A-Z]{2}$/.test(basename(dirname(result.path))) ? basename(dirname(result.path)) : 'RO';
    mkdirSync(join(partial, cc), { recursive: true });
    renameSync(result.path, join(partial, cc, basename(result.path)));
  }
  renameSync(partial, dir);
  log(
    `dataset: ${result.rows.toLocaleString('en')} rows, ${(result.bytes / 1e6).toFixed(0)} MB in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  return dir;
}
