/**
 * A message the server sent on someone else's say-so. JetStream answers a direct get on whatever
 * reply subject its requester names, with a stored message's own bytes and `Nats-Stream` among
 * its headers; so a node allowed a direct get of what it stored itself (its lease, its events, its
 * conversation copies) can put bytes of its choosing on any subject, past its permissions: another
 * node's control subject, another pool's work queue (whose stream keeps them). Tried on
 * nats-server 2.9.10. Nothing Switchboard publishes carries that header, so whatever does is
 * refused wherever nodes' messages are taken.
 */
import type { MsgHdrs } from '@nats-io/transport-node';

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
