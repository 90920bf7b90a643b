/**
 * The demo key file: `npm start` on a fresh clone creates a demo workspace and prints a key; the
 * key's plaintext is kept in `demo-key.txt` next to the ledger (mode 0600) so that later starts
 * can print it again. This is for the local demo only: a real key is shown once and never stored.
 */
import { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const DEMO_KEY_FILE = 'demo-key.txt';
export const DEMO_CREDITS = 100_000;
export const DEMO_EMAIL = 'demo@edifice.example';
export const DEMO_WORKSPACE_NAME = 'Demo';

export function demoKeyPath(dir: string): string {
  return join(dir, DEMO_KEY_FILE);
}

/** The key stored in the demo key file, or null when there is no readable file. */
export function readDemoKey(dir: string): string | null {
  let text: string;
  try {
    text = readFileSync(demoKeyPath(dir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t && !t.startsWith('#')) return t;
  }
  return null;
}

/** Writes the file whole (temporary file, then rename), readable by its owner only. */
export function writeDemoKey(dir: string, key: string): void {
  const path = demoKeyPath(dir);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(
    tmp,
    [
      '# Edifice demo API key, made by the first `npm start` for local use only.',
      "# Anyone who can read this file can spend the demo workspace's credits.",
      '# Real keys are shown once at creation and never stored in plaintext.',
      key,
      '',
    ].join('\n'),
    { mode: 0o600, flag: 'w' },
  );
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** Removes the file (its key revoked); nothing to do when there is none. */
export function removeDemoKey(dir: string): void {
  rmSync(demoKeyPath(dir), { force: true });
}
