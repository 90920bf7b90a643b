/**
 * Runs the calling thread ahead of the server's other threads: the ledger thread, for which every
 * paid page of every worker waits.
 *
 * Why: under load both cores are busy with the workers, and a ledger commit that slept in its
 * fsync then waits for a core, longer than for the disk; ten nice steps up shorten those waits
 * (bench/README.md, What the operating defaults rest on).
 *
 * Linux keeps a nice value per thread, so `setPriority(0, …)` there moves this thread alone;
 * elsewhere it would move the whole process, which changes nothing between its threads, so it is
 * left alone. Raising a priority needs CAP_SYS_NICE (or RLIMIT_NICE): without it the thread keeps
 * the process's, and the caller logs why.
 */
import { getPriority, setPriority } from 'node:os';

export interface ThreadPriority {
  /** The thread's nice value now. */
  nice: number;
  raised: boolean;
  /** Why it was not raised (nothing asked, not Linux, not permitted). */
  reason?: string;
}

/** Raises the calling thread `steps` nice values above the thread that started it (at most to −20). */
export function raiseThreadPriority(steps: number): ThreadPriority {
  const nice = getPriority(0);
  if (steps === 0) return { nice, raised: false, reason: 'EDIFICE_LEDGER_PRIORITY is 0' };
  if (process.platform !== 'linux')
    return { nice, raised: false, reason: `${process.platform} sets a priority for the whole process, not one thread` };
  const wanted = Math.max(-20, nice - steps);
  try {
    setPriority(0, wanted);
  } catch (err) {
    // os.setPriority throws a SystemError: its code is ERR_SYSTEM_ERROR, the errno is in info.
    const e = err as NodeJS.ErrnoException & { info?: { code?: string } };
    const code = e.info?.code ?? e.code ?? e.message;
    return { nice, raised: false, reason: `${code}: raising a priority needs CAP_SYS_NICE or a RLIMIT_NICE that allows nice ${wanted}` };
  }
  return { nice: getPriority(0), raised: true };
}
