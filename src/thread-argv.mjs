// Node's options for the threads the server starts from bundles or plain JavaScript (the workers,
// the ledger thread, the load's cold and CRC threads). Plain JavaScript: bin/start.mjs's early
// threads use it before any TypeScript loads.
import process from 'node:process';

/** Profiling options of Node passed on to the threads. */
const PASSED = new Set(['--cpu-prof', '--cpu-prof-dir', '--cpu-prof-interval', '--heap-prof', '--heap-prof-dir', '--heap-prof-interval']);
/** Those that take a value, as the next word or after `=` (a file name is read past, not passed on). */
const VALUED = new Set([
  '--cpu-prof-dir',
  '--cpu-prof-interval',
  '--cpu-prof-name',
  '--heap-prof-dir',
  '--heap-prof-interval',
  '--heap-prof-name',
]);

/**
 * The process's own profiling options (--cpu-prof, --heap-prof, their folders and intervals), and
 * no other: a bundle needs no loader (some 50 ms a thread), and a profile of the main thread
 * alone would miss the serving and the load. A file name given is left to the main thread:
 * every thread writing to it would keep only the last.
 * @param {readonly string[]} execArgv
 * @returns {string[]}
 */
export function threadArgv(execArgv = process.execArgv) {
  const out = [];
  for (let i = 0; i < execArgv.length; i++) {
    const word = execArgv[i];
    const name = word.split('=', 1)[0];
    const value = VALUED.has(word) && i + 1 < execArgv.length ? [execArgv[++i]] : [];
    if (PASSED.has(name)) out.push(word, ...value);
  }
  return out;
}
