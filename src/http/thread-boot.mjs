// Entry of every worker thread: Node starts workers without the TypeScript loader that `tsx`
// gave the main thread, so register it here, then run the module named in workerData.entry.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
