/**
 * An AskRecorder in the run ledger (the `asks` table, src/ledger/ask-rows.ts): every change of
 * an ask rewrites its one row, so asks outlive the daemon that held them. `get` and `list` read the
 * database. An ask a daemon held when it died cannot go on (the question's pane died with it, and
 * nothing waits for the reply): `open` records each such ask as failed, interrupted, and a delivery
 * still to make as failed, before the recorder takes new asks. Nothing is forgotten here: the
 * ledger's retention (by age) removes asks that ended long ago; without it every ask is kept.
 */
import { errorMessage, SwitchboardError, type ErrorCode } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { AskRow, AskRows } from '../ledger/index.js';
import { ASK_STATUSES, isFinal, stepAsk, stepDelivery, type DeliveryStatus } from './lifecycle.js';
import { MAX_KEPT_ASKS } from './memory-recorder.js';
import type { AskRecord, AskRecorder } from './types.js';

/** The statuses of an ask still under way: a daemon that died with one left it unsettled. */
const IN_FLIGHT_STATUSES = ASK_STATUSES.filter((s) => !isFinal(s));
/** Deliveries still to make (or being made). */
const UNSETTLED_DELIVERIES: readonly DeliveryStatus[] = ['pending', 'delivering'];

/** Why an ask left in flight ends: the same code a clean shutdown gives, and a message that says what happened. */
const INTERRUPTED: { code: ErrorCode; message: string } = {
  code: 'SHUTTING_DOWN',
  message: 'interrupted: the Switchboard daemon holding this ask stopped before it ended (a restart found it in flight)',
};
const DELIVERY_INTERRUPTED: { code: ErrorCode; message: string } = {
  code: 'SHUTTING_DOWN',
  message: "interrupted: the Switchboard daemon stopped before the outcome was typed into the asker's pane (a restart found it undelivered)",
};

export interface LedgerAskRecorderOptions {
  rows: AskRows;
  logger?: Logger;
  /** When the restart happened, for the interrupted asks' end (default: now). */
  now?: number;
}

export class LedgerAskRecorder implements AskRecorder {
  /** A write failed and none has succeeded since: said once, not on every change. */
  private failing = false;
  /** Each ask's latest write under way (its number among all writes): only the latest one's failure matters. */
  private readonly latest = new Map<string, number>();
  private written = 0;
  /** Asks whose latest change the ledger refused, as they stand: written again with the next change of any ask, and at `settled`. */
  private readonly unwritten = new Map<string, AskRecord>();
  private readonly underWay = new Set<Promise<void>>();

  private constructor(
    private readonly rows: AskRows,
    private readonly logger: Logger,
  ) {}

  /** The recorder over `rows`, once the asks a dead daemon left unsettled are recorded as interrupted (their ids). */
  static async open(options: LedgerAskRecorderOptions): Promise<{ recorder: LedgerAskRecorder; interrupted: string[] }> {
    const recorder = new LedgerAskRecorder(options.rows, options.logger ?? silentLogger);
    return { recorder, interrupted: await recorder.settleInterrupted(options.now ?? Date.now()) };
  }

  /**
   * Writes the ask's row, without waiting for it (the rows keep writes in order, and a read after
   * it sees it). A write that fails is logged, never thrown: the engine records in the middle of
   * moving an ask on, and the ask goes on (its live state is the engine's). Its row is kept and
   * written again with the next change of any ask (a later change of the same ask replaces it),
   * so nothing is lost to a ledger that was away for a while.
   */
  record(ask: Readonly<AskRecord>): void {
    const again = [...this.unwritten.values()].filter((a) => a.id !== ask.id);
    this.unwritten.clear();
    for (const a of again) this.put(a);
    this.put({ ...ask });
  }

  /**
   * Resolves once every write under way has ended, after one more try of those that failed; the
   * asks the ledger still refused are logged by id (the daemon, before it closes the ledger).
   */
  async settled(): Promise<void> {
    await this.idle();
    if (this.unwritten.size === 0) return;
    const again = [...this.unwritten.values()];
    this.unwritten.clear();
    for (const a of again) this.put(a);
    await this.idle();
    if (this.unwritten.size > 0) this.logger.error('the run ledger has not taken the last change of these asks (lost if it closes now)', { asks: [...this.unwritten.keys()] });
  }

  private put(ask: AskRecord): void {
    const n = ++this.written;
    this.latest.set(ask.id, n);
    const write = this.rows.put(toRow(ask)).then(
      () => {
        this.failing = false;
        if (this.latest.get(ask.id) === n) this.latest.delete(ask.id);
      },
      (err: unknown) => {
        if (!this.failing) this.logger.error('the run ledger could not record an ask (written again with the next change; further failures are not logged until a write succeeds)', { ask: ask.id, error: errorMessage(err) });
        this.failing = true;
        // Only the ask's latest change is kept: an older one that failed is replaced by it anyway.
        if (this.latest.get(ask.id) !== n) return;
        this.latest.delete(ask.id);
        this.unwritten.set(ask.id, ask);
      },
    );
    this.underWay.add(write);
    void write.finally(() => this.underWay.delete(write));
  }

  private async idle(): Promise<void> {
    while (this.underWay.size > 0) await Promise.allSettled([...this.underWay]);
  }

  /** The ask as last recorded; INTERNAL_ERROR when its row cannot be read. */
  async get(id: string): Promise<AskRecord | undefined> {
    const refused = this.unwritten.get(id);
    if (refused) return { ...refused };
    const row = await this.rows.get(id);
    if (!row) return undefined;
    const ask = fromRow(row);
    if (typeof ask === 'string') throw new SwitchboardError('INTERNAL_ERROR', `the run ledger's record of ask ${id} cannot be read: ${ask}`, { ask_id: id });
    return ask;
  }

  /** The newest MAX_KEPT_ASKS asks, oldest first (as the memory recorder keeps); rows that cannot be read are left out, with a warning. */
  async list(): Promise<AskRecord[]> {
    return (await this.rows.newest(MAX_KEPT_ASKS)).flatMap((row) => this.readOrSkip(row));
  }

  private async settleInterrupted(at: number): Promise<string[]> {
    const settled = (await this.rows.unsettled(IN_FLIGHT_STATUSES, UNSETTLED_DELIVERIES)).flatMap((row) => this.readOrSkip(row).map((ask) => interruptAsk(ask, at)));
    await this.rows.putAll(settled.map(toRow));
    return settled.map((a) => a.id);
  }

  private readOrSkip(row: AskRow): AskRecord[] {
    const ask = fromRow(row);
    if (typeof ask !== 'string') return [ask];
    this.logger.warn('an ask in the run ledger cannot be read: left out', { ask: row.id, problem: ask });
    return [];
  }
}

/** The ask as a daemon that restarts finds it: failed if it was in flight, its delivery failed if one was still to make. */
export function interruptAsk(ask: AskRecord, at: number): AskRecord {
  const life = stepAsk(ask, { type: 'fail', at, ...INTERRUPTED });
  const next: AskRecord = { ...ask, ...life };
  const delivery = stepDelivery(next.delivery, { type: 'failed' });
  return delivery === next.delivery ? next : { ...next, delivery, deliveryError: DELIVERY_INTERRUPTED };
}

function toRow(ask: Readonly<AskRecord>): AskRow {
  return {
    id: ask.id,
    status: ask.status,
    created_at: ask.createdAt,
    ended_at: ask.endedAt,
    target_pane: ask.target.paneId,
    asker_pane: ask.from?.paneId ?? null,
    asker_name: ask.from?.name ?? null,
    delivery: ask.delivery,
    record: JSON.stringify(ask),
  };
}

/** The record a row holds, or what is wrong with it. */
function fromRow(row: AskRow): AskRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(row.record);
  } catch (err) {
    return `its JSON does not parse (${errorMessage(err)})`;
  }
  if (typeof value !== 'object' || value === null) return 'its JSON is not an object';
  const ask = value as Partial<AskRecord>;
  // The fields every surface reads without looking; the rest were written from the same record.
  if (ask.id !== row.id) return `its JSON names another ask (${String(ask.id)})`;
  if (ask.status === undefined || !(ASK_STATUSES as readonly string[]).includes(ask.status) || ask.status !== row.status) return `its status (${String(ask.status)}) is not an ask's, or not its row's (${row.status})`;
  if (typeof ask.question !== 'string' || typeof ask.target?.paneId !== 'string' || typeof ask.createdAt !== 'number') return 'its question, target or creation time is missing';
  return ask as AskRecord;
}
