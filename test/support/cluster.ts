/**
 * A cluster for a test: a real nats-server (nats-server.ts), a controller's connection with the
 * topology laid out, more connections on demand, and everything closed and stopped by close().
 * `EventLog` keeps what an event source fired and waits for what is to come, never sleeping.
 */
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectCluster, ensureTopology, parseNatsOptions, type ClusterConnection, type NatsFlags, type TopologyOptions } from '../../src/cluster/index.js';
import type { Disposable } from '../../src/core/disposable.js';
import type { Event } from '../../src/core/emitter.js';
import { silentLogger } from '../../src/core/logger.js';
import { untilEvent } from '../../src/core/until-event.js';
import { startNatsServer, type NatsTestServer, type StartNatsOptions } from './nats-server.js';

/** A bound on a wait for something that must happen (a lease to lapse, an event to come). */
const WAIT_MS = 30_000;

export interface TestCluster {
  readonly server: NatsTestServer;
  readonly controller: ClusterConnection;
  readonly jsm: JetStreamManager;
  /** Another connection (a node, a second controller), closed by close(). */
  connect(name: string, flags?: Omit<NatsFlags, 'url'>, inboxPrefix?: string): Promise<ClusterConnection>;
  close(): Promise<void>;
}

export interface TestClusterOptions {
  topology?: Partial<TopologyOptions>;
  server?: StartNatsOptions;
  /** The controller's credentials and TLS files, when the server asks for them (its users' seeds, its CA). */
  controllerFlags?: (server: NatsTestServer) => Omit<NatsFlags, 'url'>;
}

export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const server = await startNatsServer(options.server);
  const connections: ClusterConnection[] = [];
  const connect = async (name: string, flags: Omit<NatsFlags, 'url'> = {}, inboxPrefix?: string): Promise<ClusterConnection> => {
    const connection = await connectCluster(parseNatsOptions({ url: server.url, ...flags }), { name, logger: silentLogger, ...(inboxPrefix !== undefined && { inboxPrefix }) });
    connections.push(connection);
    return connection;
  };
  try {
    const controller = await connect('test-controller', options.controllerFlags?.(server));
    const jsm = await jetstreamManager(controller.nc);
    await ensureTopology(controller.nc, jsm, { pools: [{ name: 'main' }], ...options.topology });
    return {
      server,
      controller,
      jsm,
      connect,
      close: () => closeAll(connections, server),
    };
  } catch (err) {
    await closeAll(connections, server);
    throw err;
  }
}

/** Closes every connection, newest first, then stops the server: stopped even if a close failed. */
async function closeAll(connections: ClusterConnection[], server: NatsTestServer): Promise<void> {
  try {
    for (const connection of connections.splice(0).reverse()) await connection.close();
  } finally {
    await server.stop();
  }
}

/** Everything an event source fired since, and a wait for the first that matches. */
export class EventLog<T> implements Disposable {
  readonly items: T[] = [];
  private readonly subscription: Disposable;

  constructor(private readonly event: Event<T>) {
    this.subscription = event((item) => this.items.push(item));
  }

  /** The first item (fired already, or to come) that `match` takes. */
  async waitFor(match: (item: T) => boolean, what: string): Promise<T> {
    const found = this.items.find(match);
    if (found !== undefined) return found;
    let hit: T | undefined;
    const end = await untilEvent(this.event, (item) => (match(item) ? ((hit = item), true) : false), { timeoutMs: WAIT_MS });
    if (hit === undefined) throw new Error(`no ${what} (${end}); got: ${JSON.stringify(this.items)}`);
    return hit;
  }

  dispose(): void {
    this.subscription.dispose();
  }
}

/** Resolves at the connection's next reconnect: call it before the server goes away, so the event is not missed. */
export function nextReconnect(nc: NatsConnection): Promise<void> {
  const statuses = nc.status();
  return (async () => {
    for await (const status of statuses) if (status.type === 'reconnect') break;
  })();
}
