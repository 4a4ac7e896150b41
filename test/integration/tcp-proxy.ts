/**
 * A TCP proxy on a free loopback port in front of a broker, so a test can cut one client's
 * connection while the broker (and its sessions) stay up: `cut()` drops every proxied
 * connection and refuses new ones, `resume()` accepts again on the same port.
 */
import net from 'node:net';

export interface TcpProxy {
  /** `mqtt://127.0.0.1:<port>` of the proxy. */
  url: string;
  /** Drops every connection and stops listening (connects are refused until `resume`). */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  resume(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    track(client);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  const port = await listen(0);
  const stopListening = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server.listening) resolve();
      else server.close(() => resolve());
    });
  return {
    url: `mqtt://127.0.0.1:${port}`,
    cut: stopListening,
    resume: async () => {
      await listen(port);
    },
    close: stopListening,
  };
}
