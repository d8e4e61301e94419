/**
 * One connection to NATS for a controller or a node: connected with checked options
 * (nats-options.ts), reconnecting for as long as it lives, every change of its state told to the
 * log, and closed leaving no timer or pending read behind. What a connection failure means is
 * said once here, as stable codes: FORBIDDEN for refused credentials, CONNECTION_FAILED for the rest.
 */
import { connect, errors, type ConnectionOptions, type NatsConnection, type Status } from '@nats-io/transport-node';
import { errorMessage, SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { natsAuthenticator } from './nats-auth.js';
import type { NatsOptions } from './nats-options.js';

/** Between reconnect attempts: short, since a node without NATS cannot renew its lease. */
const RECONNECT_WAIT_MS = 500;
/** How long the first connection may take (TCP, TLS and the handshake). */
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * The client pings this often and gives up on a connection after MAX_PINGS_OUT unanswered ones,
 * so a server that vanished without closing the socket is noticed in about 30 s, not NATS's
 * default 4 minutes.
 */
const PING_INTERVAL_MS = 10_000;
const MAX_PINGS_OUT = 3;

export interface ClusterConnectOptions {
  /** Shown by the server's monitoring: `switchboard-node-<name>`, `switchboard-controller`. */
  name: string;
  logger: Logger;
  /** Replies come on `<prefix>.…`; a node's user may read only its own (topology.nodeInboxPrefix). */
  inboxPrefix?: string;
}

/** A live connection; `nc` is the client's own, for the modules of this room. */
export interface ClusterConnection {
  readonly nc: NatsConnection;
  /** Ends at once: what is in flight fails. */
  close(): Promise<void>;
  /** Lets subscriptions take what the server already sent, then closes. */
  drain(): Promise<void>;
}

/** The client's settings for `options` (reads the credentials file, if any). */
function connectionOptions(options: NatsOptions, how: ClusterConnectOptions): ConnectionOptions {
  const authenticator = natsAuthenticator(options.auth, how.logger);
  return {
    servers: [...options.servers],
    name: how.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: RECONNECT_WAIT_MS,
    timeout: CONNECT_TIMEOUT_MS,
    pingInterval: PING_INTERVAL_MS,
    maxPingOut: MAX_PINGS_OUT,
    ...(authenticator !== undefined && { authenticator }),
    // An object asks for TLS and refuses a server that does not offer it; null refuses TLS, so a
    // plain loopback connection stays plain even when the server offers it.
    tls: options.tls === undefined ? null : { ...options.tls },
    ...(how.inboxPrefix !== undefined && { inboxPrefix: how.inboxPrefix }),
  };
}

/** Connects, or fails with FORBIDDEN (credentials refused) or CONNECTION_FAILED (anything else). */
export async function connectCluster(options: NatsOptions, how: ClusterConnectOptions): Promise<ClusterConnection> {
  const settings = connectionOptions(options, how);
  let nc: NatsConnection;
  try {
    nc = await connect(settings);
  } catch (err) {
    const details = { servers: options.servers };
    if (err instanceof errors.AuthorizationError) throw new SwitchboardError('FORBIDDEN', `NATS refused the credentials (${errorMessage(err)})`, details, { cause: err });
    throw new SwitchboardError('CONNECTION_FAILED', `cannot connect to NATS at ${options.servers.join(', ')}: ${errorMessage(err)}`, details, { cause: err });
  }
  const logger = how.logger.child({ nats: how.name });
  logger.info('connected to NATS', { server: nc.getServer() });
  const statusLog = logStatus(nc, logger);
  const finish = async (end: () => Promise<void>): Promise<void> => {
    if (!nc.isClosed()) await end();
    await statusLog;
  };
  return {
    nc,
    close: () => finish(() => nc.close()),
    drain: () => finish(() => nc.drain()),
  };
}

/** Tells the log every change of the connection until it closes. */
async function logStatus(nc: NatsConnection, logger: Logger): Promise<void> {
  for await (const status of nc.status()) describeStatus(status, logger);
}

function describeStatus(status: Status, logger: Logger): void {
  switch (status.type) {
    case 'disconnect':
      logger.warn('disconnected from NATS; reconnecting', { server: status.server });
      return;
    case 'reconnect':
      logger.info('reconnected to NATS', { server: status.server });
      return;
    case 'error':
      // A permission violation or a server error; the call it belongs to fails on its own.
      logger.warn('NATS reported an error', { error: status.error.message });
      return;
    case 'ldm':
      logger.warn('the NATS server is shutting down (lame duck); moving to another', { server: status.server });
      return;
    case 'staleConnection':
      logger.warn('the NATS connection stopped answering pings; reconnecting');
      return;
    case 'slowConsumer':
      logger.warn('a NATS subscription is falling behind', { subject: status.sub.getSubject(), pending: status.pending });
      return;
    case 'update':
      logger.debug('the NATS cluster changed', { added: status.added, deleted: status.deleted });
      return;
    case 'close':
      logger.info('the NATS connection is closed');
      return;
    case 'reconnecting':
    case 'ping':
    case 'forceReconnect':
      return;
  }
}
