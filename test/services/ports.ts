/** Ports for the throwaway servers tests start. */
import { createServer } from 'node:net';

/** A port free now on 127.0.0.1 (for servers that take no 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
