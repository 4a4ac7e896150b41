/** Loopback ports for tests. */
import { createServer } from 'node:net';

/**
 * A loopback port free right now (the kernel picks it): bound, then released, so nothing listens
 * on it until someone binds it (a broker the test starts, or nobody: a refused connection).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
