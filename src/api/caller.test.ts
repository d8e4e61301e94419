import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_BATCH_MS } from '../output/msg-store.js';
import { AgentCatalog } from '../agents/index.js';
import { toDisposable } from '../core/disposable.js';
import { isSwitchboardError } from '../core/errors.js';
import { LogService, type SessionLog } from '../logs/index.js';
import { PaneRegistry } from '../pane/index.js';
import type { NotificationName, Notifications } from '../protocol/methods.js';
import { Caller, OUTPUT_BACKLOG_LIMIT } from './caller.js';
import type { NotificationSink } from './notification-sink.js';

/** A sink that records notifications, with a backlog the test sets and a drain it fires. */
class RecordingSink implements NotificationSink {
  readonly sent: { method: NotificationName; params: unknown }[] = [];
  backlogBytes = 0;
  private readonly drains = new Set<() => void>();
  private waiter: (() => void) | undefined;

  notify<N extends NotificationName>(method: N, params: Notifications[N]): void {
    this.sent.push({ method, params });
    this.waiter?.();
  }

  onDrain(listener: () => void) {
    this.drains.add(listener);
    return toDisposable(() => this.drains.delete(listener));
  }

  drain(): void {
    this.backlogBytes = 0;
    for (const listener of [...this.drains]) listener();
  }

  /** Resolves once `count` notifications were sent. */
  async until(count: number): Promise<void> {
    while (this.sent.length < count) await new Promise<void>((resolve) => (this.waiter = resolve));
  }
}

describe("a caller's subscriptions to session logs", () => {
  let panes: PaneRegistry;
  let logs: LogService;
  let sink: RecordingSink;
  let caller: Caller;
  let log: SessionLog;

  beforeEach(() => {
    panes = new PaneRegistry();
    logs = new LogService(panes, new AgentCatalog());
    sink = new RecordingSink();
    caller = new Caller({ panes, logs }, sink);
    log = logs.logs.open({ id: 'r1', kind: 'run', title: 'a run', spill: false });
  });

  afterEach(async () => {
    caller.dispose();
    await logs.close();
    await panes.close({ graceMs: 0 });
  });

  it('sends the history, then live messages, then the end, each once', async () => {
    log.store.push({ type: 'stdout', content: 'before' });
    const id = caller.logSubscribe(log, { history: true });
    await sink.until(1);
    log.store.push({ type: 'stdout', content: 'after' });
    log.store.finish();
    await sink.until(3);
    expect(sink.sent.map((n) => n.method)).toEqual(['log_message', 'log_message', 'log_finished']);
    const seqs = sink.sent.flatMap((n) => (n.method === 'log_message' ? (n.params as Notifications['log_message']).messages.map((m) => m.seq) : []));
    expect(seqs).toEqual([1, 2]);
    expect(sink.sent.every((n) => (n.params as { subscription: string }).subscription === id)).toBe(true);
  });

  it('holds the next batch while the peer is behind, until it drains', async () => {
    vi.useFakeTimers();
    try {
      sink.backlogBytes = OUTPUT_BACKLOG_LIMIT + 1;
      caller.logSubscribe(log, { history: true });
      log.store.push({ type: 'stdout', content: 'one' });
      await vi.advanceTimersByTimeAsync(DEFAULT_BATCH_MS * 2);
      expect(sink.sent).toHaveLength(1);
      log.store.push({ type: 'stdout', content: 'two' });
      // Many batch windows later, the second batch still waits for the peer.
      await vi.advanceTimersByTimeAsync(DEFAULT_BATCH_MS * 10);
      expect(sink.sent).toHaveLength(1);
      sink.drain();
      await vi.advanceTimersByTimeAsync(DEFAULT_BATCH_MS * 2);
      expect(sink.sent).toHaveLength(2);
      expect((sink.sent[1]?.params as Notifications['log_message']).messages.map((m) => m.msg)).toEqual([{ type: 'stdout', content: 'two' }]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses an unknown subscription and more than its limit of subscriptions', () => {
    let unknown: unknown;
    try {
      caller.unsubscribe('nope');
    } catch (err) {
      unknown = err;
    }
    expect(isSwitchboardError(unknown, 'INVALID_PARAMS')).toBe(true);
    let over: unknown;
    try {
      for (let i = 0; i < 100; i++) caller.logSubscribe(log, { history: false });
    } catch (err) {
      over = err;
    }
    expect(isSwitchboardError(over, 'LIMIT_EXCEEDED')).toBe(true);
  });

  it('watches every pane for a subscription to all of them, and lets go on unsubscribe', () => {
    const id = caller.subscribe({ events: ['output', 'exit', 'state'], replay: false });
    caller.unsubscribe(id);
    let again: unknown;
    try {
      caller.unsubscribe(id);
    } catch (err) {
      again = err;
    }
    expect(isSwitchboardError(again, 'INVALID_PARAMS')).toBe(true);
  });
});
