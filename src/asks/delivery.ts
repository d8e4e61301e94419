/**
 * Delivers async asks' outcomes into the askers' panes: one line per asker pane, first in first
 * out, each typed only once the asker is idle with no dialog open, and each at most once (a
 * delivery that fails is recorded as failed, never typed again: typing twice is worse than a
 * failure the asker can look up with `ask get`).
 */
import type { Disposable } from '../core/disposable.js';
import { errorMessage, isSwitchboardError, SwitchboardError, type ErrorCode } from '../core/errors.js';
import type { AskDirectory, AskRecord, AskTarget } from './types.js';

/** Longest a delivery may take to type (a CLI slow to take a paste). */
const DELIVERY_TYPE_TIMEOUT_MS = 60_000;

interface DeliveryOutcome {
  ok: boolean;
  error?: { code: ErrorCode; message: string };
}

/** What the queue tells the ask's owner: typing began (the asker is idle now), and how it went. */
export interface DeliveryCallbacks {
  start: () => void;
  done: (outcome: DeliveryOutcome) => void;
}

interface Pending extends DeliveryCallbacks {
  ask: AskRecord;
}

interface AskerLine {
  pending: Pending[];
  busy: boolean;
  subscriptions: Disposable[];
}

/** The text an asker receives: the reply under a header naming who answered, or what went wrong. */
function deliveryText(ask: AskRecord): string {
  const who = `${ask.target.agent ?? ask.target.title} (pane ${ask.target.paneId}, ask ${ask.id})`;
  if (ask.status === 'done') return `[switchboard reply from ${who}]\n${ask.reply ?? ''}`;
  const why = ask.error?.message ?? ask.status;
  return `[switchboard ask to ${who} ${ask.status.replace('_', ' ')}: ${why}]`;
}

export class DeliveryQueue implements Disposable {
  private readonly lines = new Map<string, AskerLine>();
  private disposed = false;

  constructor(private readonly directory: AskDirectory) {}

  /**
   * Queues `ask`'s outcome for its asker's pane: `start` is called when typing begins, `done` once
   * with how it went (without `start` when it never could begin).
   */
  enqueue(ask: AskRecord, { start, done }: DeliveryCallbacks): void {
    const paneId = ask.from?.paneId;
    const asker = paneId !== undefined ? this.directory.get(paneId) : undefined;
    if (!paneId || !asker || !asker.alive) {
      done({ ok: false, error: { code: 'PANE_EXITED', message: `the asker's pane ${paneId ?? '(none)'} is gone` } });
      return;
    }
    let line = this.lines.get(paneId);
    if (!line) {
      const created: AskerLine = { pending: [], busy: false, subscriptions: [] };
      created.subscriptions.push(asker.onStateChange(() => this.pump(paneId)), asker.onExit(() => this.pump(paneId)));
      this.lines.set(paneId, created);
      line = created;
    }
    line.pending.push({ ask, start, done });
    this.pump(paneId);
  }

  dispose(): void {
    this.disposed = true;
    for (const [, line] of this.lines) {
      for (const s of line.subscriptions) s.dispose();
      for (const p of line.pending.splice(0)) p.done({ ok: false, error: { code: 'SHUTTING_DOWN', message: 'Switchboard stopped before the reply was delivered' } });
    }
    this.lines.clear();
  }

  private pump(paneId: string): void {
    const line = this.lines.get(paneId);
    if (!line || line.busy || this.disposed) return;
    const asker = this.directory.get(paneId);
    if (!asker || !asker.alive) {
      for (const p of line.pending.splice(0)) p.done({ ok: false, error: { code: 'PANE_EXITED', message: `the asker's pane ${paneId} exited before the reply could be delivered` } });
    }
    const next = line.pending[0];
    if (!next) {
      for (const s of line.subscriptions) s.dispose();
      this.lines.delete(paneId);
      return;
    }
    if (!asker || asker.state !== 'idle' || asker.dialogOpen) return;
    line.pending.shift();
    line.busy = true;
    void this.type(asker, next).finally(() => {
      line.busy = false;
      this.pump(paneId);
    });
  }

  private async type(asker: AskTarget, pending: Pending): Promise<void> {
    const signal = AbortSignal.timeout(DELIVERY_TYPE_TIMEOUT_MS);
    pending.start();
    try {
      await asker.prompt(deliveryText(pending.ask), signal);
      pending.done({ ok: true });
    } catch (err) {
      const code: ErrorCode = isSwitchboardError(err) ? err.code : signal.aborted ? 'TIMEOUT' : 'NOT_DELIVERED';
      pending.done({ ok: false, error: { code, message: err instanceof SwitchboardError ? err.message : errorMessage(err) } });
    }
  }
}
