/**
 * A message the server sent on someone else's say-so. JetStream answers a direct get on whatever
 * reply subject its requester names, with a stored message's own bytes and `Nats-Stream` among
 * its headers; so a node allowed a direct get of what it stored itself (its lease, its events, its
 * conversation copies) can put bytes of its choosing on any subject, past its permissions: another
 * node's control subject, another pool's work queue (whose stream keeps them). Tried on
 * nats-server 2.9.10. So a node may make no direct get at all (nodePermissions): it reads its
 * lease, claims and cancel marks by the stream API's get, whose answer is wrapped in the API's
 * own JSON, and asks the controller for its last event of a run. Any API answer still goes
 * wherever its asker says, so what nodes read from a key-value bucket is checked for being a
 * record at all (an answer stored under a lease, claim or cancel key is nobody's). A pull's
 * deliveries are not kept by streams (tried: they go to its reply subject's subscribers only);
 * its status replies are, as empty messages.
 *
 * Nothing Switchboard publishes carries the header, so whatever does is refused wherever nodes'
 * messages are taken, for nodes still under an older block of permissions with direct gets: core
 * subscriptions through `subscribeToNodes`, JetStream deliveries (whose consumers are made by the
 * controller) by `isReflected` where they are read.
 */
import type { Msg, MsgHdrs, NatsConnection, Subscription } from '@nats-io/transport-node';

const REFLECTED_HEADER = 'Nats-Stream';

/**
 * True for such a message. One read from a stream by a direct get of our own carries the header
 * once from that get (the server adds its own to what the stream kept): it is reflected when it
 * carries it twice.
 */
export function isReflected(headers: MsgHdrs | undefined, readBy: 'delivery' | 'direct get' = 'delivery'): boolean {
  const streams = headers?.has(REFLECTED_HEADER) === true ? headers.values(REFLECTED_HEADER) : [];
  return streams.length > (readBy === 'direct get' ? 1 : 0);
}

export interface NodeSubscriptionOptions {
  /** A queue group: one subscriber of the group takes each message. */
  readonly queue?: string;
  /** Told of each message refused as reflected (to log it, bounded by the caller). */
  readonly refused?: (message: Msg) => void;
  /** Told when the subscription itself fails (permissions, a closed connection). */
  readonly failed?: (err: Error) => void;
}

/**
 * A core subscription to what nodes send on `subject`: `take` sees every message but those the
 * server sent on another client's say-so, which go to `refused`.
 */
export function subscribeToNodes(nc: NatsConnection, subject: string, take: (message: Msg) => void, options: NodeSubscriptionOptions = {}): Subscription {
  return nc.subscribe(subject, {
    ...(options.queue !== undefined && { queue: options.queue }),
    callback: (err, message) => {
      if (err !== null) options.failed?.(err);
      else if (isReflected(message.headers)) options.refused?.(message);
      else take(message);
    },
  });
}
