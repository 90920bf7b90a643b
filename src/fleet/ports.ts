/** Ports for the processes of a fleet on one machine. */
import { createServer } from 'node:net';

/** A port free now on 127.0.0.1 (for a server started next that takes no 0). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
