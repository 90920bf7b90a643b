/**
 * Loaded first in each replica (`--import`): a replica whose fleet process ended without stopping
 * it (SIGKILL, a crash) stops itself (SIGTERM, its graceful stop) rather than serving on alone,
 * unsupervised and outside HAProxy. Linux gives a child no signal when its parent dies unless it
 * asks through prctl, which Node cannot: the parent's PID is watched instead.
 */
const parent = process.ppid;
const watch = setInterval(() => {
  if (process.ppid !== parent) {
    clearInterval(watch);
    process.kill(process.pid, 'SIGTERM');
  }
}, 1_000);
watch.unref();
