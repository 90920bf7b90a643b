/**
 * The data a thread of the pool runs on: its workerData, or, for a thread started before the main
 * thread knew it (early-threads.mjs), the first message on the port its workerData holds.
 */
import { once } from 'node:events';
import { workerData, type MessagePort } from 'node:worker_threads';

export async function threadData<T>(): Promise<T> {
  const given = workerData as { early?: MessagePort } | null;
  if (!given?.early) return workerData as T;
  const [data] = (await once(given.early, 'message')) as [T];
  given.early.close();
  return data;
}
