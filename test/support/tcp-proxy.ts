/**
 * A TCP proxy in the test process, between one client (a worker process) and the database,
 * that can cut that client off as a network partition does: `blackHole()` stops forwarding
 * either way, on open connections and new ones, without closing anything, so the client's
 * statements neither arrive nor fail, they hang; `heal()` forwards what was held and goes on.
 * One proxy per client cut off; the others connect to the database directly.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  /** On 127.0.0.1. */
  readonly port: number;
  blackHole(): void;
  heal(): void;
  /** Closes every connection and stops listening. */
  close(): Promise<void>;
}

/** One client connection and its upstream, created only while traffic flows. */
interface Link {
  client: Socket;
  upstream: Socket | undefined;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const links = new Set<Link>();
  let holed = false;

  const drop = (link: Link): void => {
    link.client.destroy();
    link.upstream?.destroy();
    links.delete(link);
  };

  /** Forwards `from` to `to`, holding back (not reading) while black-holed or `to` is full. */
  const forward = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => {
      if (!to.write(chunk)) from.pause();
    });
    to.on('drain', () => {
      if (!holed) from.resume();
    });
    from.on('end', () => to.end());
  };

  /** Either side's error or close ends the link, both sides. */
  const watch = (link: Link, socket: Socket): void => {
    socket.on('error', () => drop(link));
    socket.on('close', () => drop(link));
  };

  const open = (link: Link): void => {
    const upstream = connect(target.port, target.host);
    link.upstream = upstream;
    watch(link, upstream);
    forward(link.client, upstream);
    forward(upstream, link.client);
  };

  const server = createServer((client) => {
    const link: Link = { client, upstream: undefined };
    links.add(link);
    watch(link, client);
    // Cut off: the connection is accepted (the client's SYN was answered before the cut)
    // but nothing reaches the database until the partition heals.
    if (holed) client.pause();
    else open(link);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP port');

  return {
    port: address.port,
    blackHole() {
      holed = true;
      for (const { client, upstream } of links) {
        client.pause();
        upstream?.pause();
      }
    },
    heal() {
      holed = false;
      for (const link of links) {
        if (link.upstream === undefined) open(link);
        link.client.resume();
        link.upstream!.resume();
      }
    },
    async close() {
      for (const link of links) drop(link);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
