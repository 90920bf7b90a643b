/**
 * raiseThreadPriority where it is refused (Linux, where the server raises its ledger thread): a
 * child process without CAP_SYS_NICE, dropped from root's bounding set by util-linux's setpriv,
 * so the kernel answers EACCES whoever runs the suite.
 */
import { execFileSync } from 'node:child_process';
import { getPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { raiseThreadPriority } from '../src/http/thread-priority.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const script = `import { raiseThreadPriority } from './src/http/thread-priority.ts';
process.stdout.write(JSON.stringify(raiseThreadPriority(10)));`;

/** Runs the script in a child, under `prefix` (a command and its arguments) if given. */
function inChild(prefix: string[]): { nice: number; raised: boolean; reason?: string } {
  const args = [...prefix, process.execPath, '--import', 'tsx', '--input-type=module', '-e', script];
  return JSON.parse(execFileSync(args[0], args.slice(1), { cwd: root, encoding: 'utf8' })) as {
    nice: number;
    raised: boolean;
    reason?: string;
  };
}

describe('raiseThreadPriority', () => {
  it('says no priority was asked for at 0 steps, and leaves the thread as it is', () => {
    const nice = getPriority(0);
    expect(raiseThreadPriority(0)).toEqual({ nice, raised: false, reason: 'EDIFICE_LEDGER_PRIORITY is 0' });
    expect(getPriority(0)).toBe(nice);
  });

  it("refused, names the errno (not Node's ERR_SYSTEM_ERROR) and the capability, and keeps the nice value", () => {
    // Not root: the process has no CAP_SYS_NICE to drop (and may not call setpriv's capability options).
    const refused = inChild(process.getuid?.() === 0 ? ['setpriv', '--bounding-set', '-sys_nice', '--inh-caps', '-sys_nice'] : ['env']);
    expect(refused.raised).toBe(false);
    expect(refused.reason).toMatch(/^(EACCES|EPERM): raising a priority needs CAP_SYS_NICE or a RLIMIT_NICE that allows nice -?\d+$/);
    expect(refused.nice).toBe(getPriority(0));
  });
});
