/**
 * The few NATS failures the cluster acts on, recognised in one place: the client's error classes
 * are not all exported as classes one can test with instanceof (a "no responders" is a RequestError
 * whose cause is NoRespondersError, see /work/nats-notes.md §6), and JetStream reports its own
 * by number.
 */
import { JetStreamApiError } from '@nats-io/jetstream';
import { errors } from '@nats-io/transport-node';

/** JetStream's "wrong last sequence": a compare-and-set lost (a key taken, a lease gone). */
const WRONG_LAST_SEQUENCE = 10071;

/** True when a compare-and-set write (kv.create, kv.update) found another revision than it expected. */
export function isWrongLastSequence(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === WRONG_LAST_SEQUENCE;
}

/** True when a request found nobody subscribed to its subject. */
export function isNoResponders(err: unknown): boolean {
  return (err instanceof errors.RequestError && err.isNoResponders()) || err instanceof errors.NoRespondersError;
}

/** True when a request or publish got no answer in time. */
export function isTimeout(err: unknown): boolean {
  return err instanceof errors.TimeoutError;
}

/**
 * True when a JetStream call got no answer: a timeout, or nobody to answer it (how the client
 * words that for JetStream is "jetstream is not enabled", with the no-responders error as its
 * cause, as when the server is restarting: /work/nats-notes.md §2). Worth sending again.
 */
export function isNoAnswer(err: unknown): boolean {
  return isTimeout(err) || isNoResponders(err) || (err instanceof Error && isNoResponders(err.cause));
}

/** True when the connection is closed or draining, so nothing more can be sent on it. */
export function isConnectionClosed(err: unknown): boolean {
  return err instanceof errors.ClosedConnectionError || err instanceof errors.DrainingConnectionError;
}

/** True when the server refused a publish or subscribe by the user's permissions. */
export function isPermissionViolation(err: unknown): boolean {
  return err instanceof errors.PermissionViolationError || (err instanceof Error && err.cause instanceof errors.PermissionViolationError);
}

/** JetStream's "no message found" (a stream message by sequence that is not there). */
const NO_MESSAGE_FOUND = 10037;

/** True when a stream message asked for by sequence is not in the stream. */
export function isNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === NO_MESSAGE_FOUND;
}
