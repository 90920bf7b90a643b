/**
 * Runs the calling thread ahead of the server's other threads: the ledger thread, for which every
 * paid page of every worker waits.
 *
 * Why: at 80% of the peak rate both cores are busy with the workers, and a commit of the ledger
 * thread that slept in its fsync then waited for a core: of its commits over 10 ms, nearly all of
 * the time was spent waiting to run (`/proc/thread-self/schedstat`), not in the disk (an fsync
 * here takes 0.2–1.4 ms alone). Ten nice steps up cut such commits and the client's p99 at 80%
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
  if (process.platform !== 'linux') return { nice, raised: false, reason: `${process.platform} sets a priority for the whole process, not one thread` };
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
