/**
 * Acknowledgements held until what they stand for is durable, as a group commit: the event intake
 * hands over each delivery the sink took, and one store write covers every delivery that came in
 * while the previous write was going on (or in the same turn of the event loop), so a stream of
 * events costs a transaction per batch, not one per event. A write that fails keeps its deliveries,
 * ahead of later ones, and is tried again after `retryMs`; unacknowledged meanwhile, they would come
 * again after the consumer's ack wait anyway, and the sink stores an event it has once.
 */
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';

export interface DurableAcksOptions<T> {
  /** Resolves once everything the sink has taken so far is stored (rejects when it could not be). */
  durable: () => Promise<void>;
  /** Acknowledges one delivery (only ever after a `durable` that began after it was added). */
  ack: (delivery: T) => void;
  retryMs: number;
  logger: Logger;
}

/** idle: nothing waits; writing: a pass is making what waits durable; retrying: the last write failed, the next is due; closed: close() was called. */
type AckState = 'idle' | 'writing' | 'retrying' | 'closed';

export class DurableAcks<T> {
  private waiting: T[] = [];
  private state: AckState = 'idle';
  private pass: Promise<void> = Promise.resolve();
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly options: DurableAcksOptions<T>) {}

  /** Deliveries the sink has taken: acknowledged once a write that began after this call succeeds. */
  add(deliveries: readonly T[]): void {
    if (deliveries.length === 0) return;
    this.waiting.push(...deliveries);
    if (this.state === 'idle') this.startPass();
  }

  /** How many deliveries wait for a durable write. */
  get pending(): number {
    return this.waiting.length;
  }

  /**
   * Stops retrying and waits for the write in progress (which acknowledges what it covers). What
   * still waits is left unacknowledged: it comes again to the next reader of the stream.
   */
  async close(): Promise<void> {
    const wasWriting = this.state === 'writing';
    this.state = 'closed';
    clearTimeout(this.retry);
    this.retry = undefined;
    if (wasWriting) await this.pass;
  }

  private startPass(): void {
    this.state = 'writing';
    this.pass = this.writePasses();
  }

  private async writePasses(): Promise<void> {
    // The deliveries already in hand (a batch the consumer handed over) join this first write.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      try {
        await this.options.durable();
      } catch (err) {
        this.waiting = [...batch, ...this.waiting];
        this.options.logger.warn('the event sink could not store what it took; acknowledging it later', { events: this.waiting.length, error: errorMessage(err) });
        this.scheduleRetry();
        return;
      }
      for (const delivery of batch) this.options.ack(delivery);
      if (this.state === 'closed') return;
    }
    this.state = 'idle';
  }

  private scheduleRetry(): void {
    if (this.state === 'closed') return;
    this.state = 'retrying';
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (this.state === 'retrying') this.startPass();
    }, this.options.retryMs);
  }
}
