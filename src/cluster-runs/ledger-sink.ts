/**
 * The controller's ledger as the event intake's sink (cluster/event-intake.ts): an event is
 * ingested only when it came on the subject of the node this ledger sent its run to (the server's
 * permissions hold a node to its own name), from that node or written there by the controller
 * itself (its `orphaned`); anything else is dropped (and said), never stored. Once a run is orphaned its node's events are dropped too: the node was given up
 * on, and a node that comes back must not write into a run the person now decides about.
 * `durable` is the ledger's flush, so the intake acknowledges an event only once it is stored.
 */
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { DeliveredEvent, EventSink } from '../cluster/index.js';
import type { RunLedger } from '../ledger/index.js';
import { eventFromMessage } from './run-wire.js';

/** The `Sb-Node` header of an event the controller wrote on a run's subject (not a node name: names have no '@'). */
export const CONTROLLER_PUBLISHER = '@controller';
/** Runs whose node is remembered for the events' check; past it the oldest are read again from the ledger. */
const REMEMBERED_RUNS = 10_000;

export class LedgerSink implements EventSink {
  /** Each run's node, as the ledger recorded it (null: not a run of the cluster). */
  private readonly nodes = new Map<string, string | null>();
  /** Runs orphaned and not ended: their node's events are dropped. */
  private readonly orphaned = new Set<string>();

  constructor(
    private readonly ledger: RunLedger,
    private readonly logger: Logger,
  ) {}

  /**
   * Run `runId` is sent to `node` now (its ledger says so already): its events are taken from
   * there, whatever node an event that came before (a stray, from where it waited) made this remember.
   */
  sentTo(runId: string, node: string): void {
    this.nodes.delete(runId);
    this.nodes.set(runId, node);
    if (this.nodes.size > REMEMBERED_RUNS) this.nodes.delete(this.nodes.keys().next().value ?? '');
  }

  /** Takes up a run recorded orphaned before this sink (a controller restart). */
  markOrphaned(runId: string): void {
    this.orphaned.add(runId);
  }

  /** Only events that came on the subject of the node the run was sent to can be the run's. */
  async accepts(node: string | undefined, runId: string): Promise<boolean> {
    const sentTo = await this.nodeOf(runId);
    return sentTo !== null && sentTo === node;
  }

  async lastSeq(runId: string): Promise<number> {
    return (await this.ledger.run(runId))?.last_seq ?? 0;
  }

  durable(): Promise<void> {
    return this.ledger.flush();
  }

  async write(delivered: DeliveredEvent): Promise<void> {
    const event = eventFromMessage(delivered.event);
    if (event === undefined) {
      this.logger.warn('dropped an event this controller cannot read', { run_id: delivered.event.run_id, seq: delivered.event.seq, schema_version: delivered.event.schema_version });
      return;
    }
    const byController = delivered.publisher === CONTROLLER_PUBLISHER;
    // A node's user may set the header on its own subjects: what the controller writes there is
    // only ever a run's move to `orphaned`, so nothing else passes for its own.
    if (byController && !(event.type === 'state' && event.data.to === 'orphaned')) {
      this.logger.warn("dropped an event said to be the controller's that the controller never writes", { run_id: event.run_id, seq: event.seq, type: event.type });
      return;
    }
    // The intake asked already (accepts); asked again here, so no caller of write can pass around it.
    if (!(await this.accepts(delivered.node, event.run_id))) {
      this.logger.warn('dropped an event from a node the run was not sent to', { run_id: event.run_id, seq: event.seq, from: delivered.node, publisher: delivered.publisher });
      return;
    }
    if (!byController && this.orphaned.has(event.run_id)) {
      this.logger.warn('dropped an event of an orphaned run from its node (the node was lost, and the run is the person\'s to decide)', { run_id: event.run_id, seq: event.seq, node: delivered.node });
      return;
    }
    try {
      this.ledger.ingest(event);
    } catch (err) {
      this.logger.warn('dropped an event of a run that is not live in the ledger', { run_id: event.run_id, seq: event.seq, error: errorMessage(err) });
      // Ended meanwhile (an orphaned run the person ended here): nothing more to drop for it.
      this.orphaned.delete(event.run_id);
      return;
    }
    if (event.type === 'state' && event.data.to === 'orphaned') this.orphaned.add(event.run_id);
    if (event.type === 'done') this.orphaned.delete(event.run_id);
  }

  private async nodeOf(runId: string): Promise<string | null> {
    const known = this.nodes.get(runId);
    if (known !== undefined) return known;
    const node = (await this.ledger.run(runId))?.spec.node ?? null;
    this.nodes.set(runId, node);
    if (this.nodes.size > REMEMBERED_RUNS) this.nodes.delete(this.nodes.keys().next().value ?? '');
    return node;
  }
}
