/**
 * A TCP relay on loopback that can cut what passes through it as a network partition would, for
 * the tests that cut one cluster node off NATS while the controller and other nodes stay on it
 * (test/cluster/partition.test.ts): the node is given the relay's URL, everyone else the server's.
 *
 * Why a relay and not a network namespace: a node whose NATS server is not on loopback must speak
 * TLS with credentials (src/cluster/nats-options.ts), so a namespace would drag a PKI into every
 * test; it also needs root and `ip`/`iptables`. A relay cuts one client's path only, as a pulled
 * cable does, with nothing but node:net.
 *
 * `cut()` is a black hole, not a refusal: a real partition drops packets, it sends no RST. Both
 * ends' sockets stay open and see nothing; a new connection is accepted (the kernel's handshake on
 * loopback cannot be stopped) but nothing is relayed on it, nor is the server even dialled. What
 * either side writes is held.
 *
 * How the link comes back is the test's choice, because a real partition ends either way:
 * - `restore('resume')`: the partition was shorter than either end's patience. TCP retransmits
 *   unacknowledged segments for many minutes (Linux's tcp_retries2: about 15), and the NATS client
 *   only gives up on a connection after its pings go unanswered (~30 s here, connection.ts), so a
 *   short cut costs nothing but delay: the held bytes arrive, in order, once, and the connections
 *   go on. A side that closed meanwhile has its close delivered after its bytes.
 * - `restore('reset')`: an end gave up during the partition (a ping check, a write deadline). The
 *   bytes in flight are lost and the first segment after the partition is answered by RST: every
 *   connection that lived through the cut is destroyed, and the client reconnects.
 */
import net from 'node:net';

/** A bound on the relay's own waits (its listen, its close). */
const WAIT_MS = 10_000;

export type RestoreHow = 'resume' | 'reset';
/** Who wrote: the client (the cut-off node) or the server. */
type Side = 'client' | 'server';

/** One direction of a connection: bytes and an end held while the link is cut. */
interface Direction {
  held: Buffer[];
  /** The source ended (FIN) or closed while cut: delivered after the held bytes on a resume. */
  ended: boolean;
}

interface Link {
  readonly client: net.Socket;
  /** Dialled at accept, or at a resume for a connection accepted while cut. */
  server: net.Socket | undefined;
  readonly up: Direction;
  readonly down: Direction;
  /** Everything each side wrote while cut (for `untilHeld`), as text. */
  heldText: Record<Side, string>;
  /** The last bytes each side wrote while relayed, so that a trip text split across two chunks is still seen. */
  tail: Record<Side, string>;
}

/** A cut armed to start the moment one side writes a text (`cutWhen`). */
interface Trip {
  readonly text: string;
  readonly from: Side;
  readonly fire: () => void;
}

export interface TcpCut {
  /** The relay's port on 127.0.0.1. */
  readonly port: number;
  /** `nats://127.0.0.1:<port>`: the URL to give the client that is to be cut off. */
  readonly url: string;
  /** True while the link is cut. */
  readonly isCut: boolean;
  /** Connections accepted so far (a client that reconnects makes a new one). */
  readonly accepted: number;
  /** Starts a black hole (see the module comment). */
  cut(): void;
  /**
   * Starts the black hole the moment `from` writes `text` on any connection: the chunk that
   * completes it is held, as a link that dies while those bytes are on the wire. Resolves then;
   * rejects after `ms`. One at a time.
   */
  cutWhen(text: string, from: Side, ms: number): Promise<void>;
  /** Ends the black hole, as `how` says. */
  restore(how: RestoreHow): void;
  /**
   * Resolves once `from` (the client unless given) wrote, while cut, bytes in which `text` occurs
   * (on one connection): proof that it tried to say it during the partition. Rejects after `ms`.
   */
  untilHeld(text: string, ms: number, from?: Side): Promise<void>;
  /** Destroys every connection and stops listening. */
  close(): Promise<void>;
}

/** Starts a relay to `127.0.0.1:targetPort` on a free loopback port. */
export async function startTcpCut(targetPort: number): Promise<TcpCut> {
  const links = new Set<Link>();
  const heldWaiters = new Set<() => void>();
  let cut = false;
  let accepted = 0;
  let trip: Trip | undefined;

  const dial = (link: Link): void => {
    const server = net.connect({ host: '127.0.0.1', port: targetPort });
    link.server = server;
    server.setNoDelay(true);
    relay(link, server, () => link.client, link.down);
    // Bytes the client wrote before the server was dialled (accepted while cut) go first.
    flush(link.up, server);
  };

  /** Relays `from` to `to` (a getter: the server's socket may come later), or holds what comes while cut. */
  const relay = (link: Link, from: net.Socket, to: () => net.Socket | undefined, direction: Direction): void => {
    const side: Side = direction === link.up ? 'client' : 'server';
    from.on('data', (chunk: Buffer) => {
      if (!cut && trip?.from === side) {
        const seen = link.tail[side] + chunk.toString('latin1');
        link.tail[side] = seen.slice(-trip.text.length);
        if (seen.includes(trip.text)) {
          cut = true;
          trip.fire();
          trip = undefined;
        }
      }
      if (cut) {
        direction.held.push(chunk);
        link.heldText[side] += chunk.toString('latin1');
        for (const wake of heldWaiters) wake();
        return;
      }
      to()?.write(chunk);
    });
    const finish = (): void => {
      if (cut) direction.ended = true;
      else to()?.end();
    };
    from.on('end', finish);
    from.on('close', () => {
      if (cut) direction.ended = true;
      else drop(link);
    });
    from.on('error', () => undefined);
  };

  /** Delivers what `direction` held to `to`, and its end after it. */
  const flush = (direction: Direction, to: net.Socket): void => {
    for (const chunk of direction.held.splice(0)) to.write(chunk);
    if (direction.ended) to.end();
  };

  const drop = (link: Link): void => {
    links.delete(link);
    link.client.destroy();
    link.server?.destroy();
  };

  const listener = net.createServer((client) => {
    accepted++;
    client.setNoDelay(true);
    const link: Link = { client, server: undefined, up: { held: [], ended: false }, down: { held: [], ended: false }, heldText: { client: '', server: '' }, tail: { client: '', server: '' } };
    links.add(link);
    relay(link, client, () => link.server, link.up);
    if (!cut) dial(link);
  });
  listener.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the TCP relay did not listen within ${WAIT_MS} ms`)), WAIT_MS);
    listener.listen(0, '127.0.0.1', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const port = (listener.address() as net.AddressInfo).port;

  return {
    port,
    url: `nats://127.0.0.1:${port}`,
    get isCut() {
      return cut;
    },
    get accepted() {
      return accepted;
    },
    cut() {
      cut = true;
    },
    cutWhen(text, from, ms) {
      if (trip !== undefined) return Promise.reject(new Error('a cut is armed already'));
      for (const link of links) link.tail[from] = '';
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          trip = undefined;
          reject(new Error(`the ${from} did not write '${text}' within ${ms} ms`));
        }, ms);
        trip = {
          text,
          from,
          fire: () => {
            clearTimeout(timer);
            resolve();
          },
        };
      });
    },
    restore(how) {
      if (!cut) return;
      cut = false;
      for (const link of [...links]) {
        if (how === 'reset') {
          drop(link);
          continue;
        }
        link.heldText = { client: '', server: '' };
        if (link.server === undefined) {
          // Accepted while cut: the server is dialled now, unless the client gave up meanwhile.
          if (link.up.ended) drop(link);
          else dial(link);
          continue;
        }
        flush(link.up, link.server);
        flush(link.down, link.client);
      }
    },
    untilHeld(text, ms, from = 'client') {
      const found = (): boolean => [...links].some((link) => link.heldText[from].includes(text));
      if (found()) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const wake = (): void => {
          if (!found()) return;
          clearTimeout(timer);
          heldWaiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(() => {
          heldWaiters.delete(wake);
          reject(new Error(`the ${from} did not write '${text}' while cut within ${ms} ms`));
        }, ms);
        heldWaiters.add(wake);
      });
    },
    async close() {
      for (const link of [...links]) drop(link);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, WAIT_MS);
        listener.close(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
