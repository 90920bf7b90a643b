/** The admin CLI (tools/admin.ts) as a child process, for the tests that drive it. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * `npx tsx tools/admin.ts ...args` with these environment variables set (EDIFICE_LEDGER unset
 * unless given), without npx's start-up cost. Asynchronous: a test that blocked in spawnSync
 * through forty runs could starve vitest's own messages past their 60 s.
 */
export function adminWith(vars: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.EDIFICE_LEDGER;
  Object.assign(env, vars);
  const child = spawn(process.execPath, ['--import', 'tsx', 'tools/admin.ts', ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
