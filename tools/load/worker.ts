/**
 * A load thread's entry (started by `run.ts` through a small bootstrap that registers tsx): says
 * it is ready, waits for the go, runs its engine, posts what it recorded.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runEngine, type EnginePlan } from './engine.ts';

const port = parentPort!;
port.once('message', () => {
  runEngine(workerData as EnginePlan).then(
    (result) => port.postMessage({ type: 'result', result }),
    (err: unknown) => port.postMessage({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
port.postMessage({ type: 'ready' });
