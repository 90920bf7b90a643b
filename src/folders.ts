/**
 * Creating a file's folder. Node 20's recursive mkdir never returns for some paths it cannot
 * create (under /proc it spins at 100% CPU), so a server or tool given such a path would hang at
 * start instead of saying so: the missing levels are created one at a time, and the first that
 * cannot be fails with its own name.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** Creates `dir` and its missing parents; returns the folders it created, outermost first. */
export function makeFolder(dir: string): string[] {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d) && dirname(d) !== d; d = dirname(d)) missing.unshift(d);
  const created: string[] = [];
  for (const d of missing) {
    try {
      mkdirSync(d);
      created.push(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // made meanwhile by another process: fine
    }
  }
  return created;
}
