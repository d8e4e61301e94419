/**
 * Who may start a run: whoever creates its key `run.<pool>.<id>` in sb_claims first (under the
 * pool whose queue it was sent to: only that pool's nodes may write there), by compare-and-set
 * (kv.create fails with "wrong last sequence" when the key exists). A node must win the claim
 * before it starts anything; the controller takes it to abandon a run. This, not the work queue,
 * is what makes a start happen at most once: JetStream's max_deliver 1 keeps a work item from
 * going to two nodes, but a node frozen with the item in hand (SIGSTOP, a cut network) can wake
 * up long after the controller gave up on it (/work/nats-notes.md §4), and then finds the claim taken.
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { z } from 'zod';
import { errorMessage, SwitchboardError } from '../core/errors.js';
import { readKvEntry } from './kv-records.js';
import { isWrongLastSequence } from './nats-errors.js';
import { cancelKey, CLAIMS_BUCKET, claimKey, legacyClaimKey } from './topology.js';

/** Tries at a claim whose answer was lost (a timeout) before giving up. */
const CLAIM_ATTEMPTS = 4;
const CLAIM_RETRY_MS = 250;
/** How long one try may wait for its answer: @nats-io/jetstream's default request timeout, which the claims' bucket keeps. */
const CLAIM_REQUEST_MS = 5_000;
/**
 * The longest a claim can take before it is won, lost or given up: every try timing out, with the
 * waits between them (about 22.5 s). A node that holds a work item may still be claiming it until then.
 */
export const CLAIM_BUDGET_MS = CLAIM_ATTEMPTS * CLAIM_REQUEST_MS + CLAIM_RETRY_MS * ((CLAIM_ATTEMPTS * (CLAIM_ATTEMPTS + 1)) / 2);

/** Who holds a run: a node (its name and process), or the controller that abandoned it. */
const RunClaimSchema = z.object({
  holder: z.string().min(1),
  role: z.enum(['node', 'controller']),
  /** The holder's process, so a holder whose first answer was lost knows the claim for its own. */
  instance: z.string().min(1),
  /** When it was claimed, ms since the epoch (the holder's clock). */
  at: z.number(),
});

export type RunClaim = z.infer<typeof RunClaimSchema>;

/** What the controller's mark asks of a run: to end it whole, or only its turn (its conversation kept). */
export type MarkedStop = 'cancel' | 'interrupt';
const StopMarkSchema = z.object({ at: z.number(), how: z.enum(['cancel', 'interrupt']).optional() });

/** What a claim key holds when it holds something that is no claim. */
const NOT_A_CLAIM = 'not a claim';

export type ClaimOutcome = { readonly won: true } | { readonly won: false; readonly holder: RunClaim | undefined };

/**
 * How a claim treats `run.<id>`, the key of a Switchboard before per-pool claims (nodes not yet
 * upgraded, and controllers before this one, claim there): `read` (a node's: it may read that key,
 * not write it) counts a claim there as the run's; `fence` (the controller's) also creates it
 * before the pool's key, so an older node finds the run taken; `off` ignores it. A claim there
 * counts only when the controller made it or it names the pool's own node: an older node's user
 * may write that key for any run, and must not hold back another node's.
 */
export type LegacyClaims = 'off' | 'read' | 'fence';

export class RunClaims {
  private constructor(
    private readonly kv: KV,
    private readonly legacy: LegacyClaims,
  ) {}

  /** Binds the claims bucket (laid out by the controller; a node's user may not look it up). */
  static async open(nc: NatsConnection, legacy: LegacyClaims): Promise<RunClaims> {
    // Read by the stream API's get, never a direct get: a node may make none (reflected.ts).
    return new RunClaims(await new Kvm(nc).open(CLAIMS_BUCKET, { allow_direct: false }), legacy);
  }

  /**
   * Claims run `runId`, sent to `pool`'s queue, for `claim.holder`. Won when the key was free, or
   * holds this very claim (an earlier try whose answer was lost); lost, with the holder, when
   * someone else has it. CONNECTION_FAILED when the server could not be asked: the run must not start then.
   */
  async claim(pool: string, runId: string, claim: RunClaim): Promise<ClaimOutcome> {
    const key = claimKey(pool, runId);
    let lastError: unknown;
    const mine = (holder: RunClaim | undefined): boolean => holder !== undefined && holder.instance === claim.instance && holder.holder === claim.holder;
    for (let attempt = 1; attempt <= CLAIM_ATTEMPTS; attempt++) {
      try {
        const older = await this.olderClaim(pool, runId, claim);
        if (older !== undefined && !mine(older)) return { won: false, holder: older };
        await this.kv.create(key, JSON.stringify(claim));
        return { won: true };
      } catch (err) {
        lastError = err;
        if (isWrongLastSequence(err)) {
          const holder = await this.holderOf(pool, runId);
          return mine(holder) ? { won: true } : { won: false, holder };
        }
      }
      await new Promise((resolve) => setTimeout(resolve, CLAIM_RETRY_MS * attempt));
    }
    throw new SwitchboardError('CONNECTION_FAILED', `cannot claim run ${runId}: ${errorMessage(lastError)}`, { run_id: runId }, { cause: lastError });
  }

  /**
   * Marks run `runId` to be stopped, `how` (the controller's, before it asks the node): a node
   * checks the mark after winning the claim and again once the run is registered, so no stop falls
   * between. An interrupt never weakens a cancel marked before it: it is written only where no mark
   * stands (compare-and-set), while a cancel overwrites an interrupt.
   */
  async markStopped(runId: string, how: MarkedStop): Promise<void> {
    const value = JSON.stringify({ at: Date.now(), how });
    if (how === 'cancel') {
      await this.kv.put(cancelKey(runId), value);
      return;
    }
    try {
      await this.kv.create(cancelKey(runId), value);
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err;
      // Something there that is no mark (a JetStream API answer sent onto the key) is written over.
      const held = readKvEntry(await this.kv.get(cancelKey(runId)), StopMarkSchema);
      if (held.kind === 'stray') await this.kv.update(cancelKey(runId), value, held.revision);
    }
  }

  /** How the controller marked run `runId` to be stopped, or undefined when it did not. */
  async stopMarked(runId: string): Promise<MarkedStop | undefined> {
    // A mark that does not say how (an earlier controller's) is a cancel. A stray (kv-records.ts) is
    // no mark: it must not stop a run.
    const held = readKvEntry(await this.kv.get(cancelKey(runId)), StopMarkSchema);
    if (held.kind !== 'record') return undefined;
    return held.record.how === 'interrupt' ? 'interrupt' : 'cancel';
  }

  /** The claim on run `runId` of `pool`'s queue, or undefined when nobody claimed it (or what is there is not a claim). */
  async holderOf(pool: string, runId: string): Promise<RunClaim | undefined> {
    // The pool's key first: a node that claimed there holds the run, whatever the older key says.
    // Something there that is no claim (a JetStream API answer sent onto it, reflected.ts) may
    // have been written over a node's claim: the older key does not decide then, and nobody wins.
    const current = await this.read(claimKey(pool, runId));
    if (current !== undefined || this.legacy === 'off') return current === NOT_A_CLAIM ? undefined : current;
    return counted(await this.read(legacyClaimKey(runId)), pool);
  }

  /**
   * The claim under the older key that stands in the way of `claim` (undefined: none). Fenced, the
   * older key is created first (an older node then finds the run taken); one there already is read.
   */
  private async olderClaim(pool: string, runId: string, claim: RunClaim): Promise<RunClaim | undefined> {
    if (this.legacy === 'off') return undefined;
    const key = legacyClaimKey(runId);
    if (this.legacy === 'fence') {
      try {
        await this.kv.create(key, JSON.stringify(claim));
        return undefined;
      } catch (err) {
        if (!isWrongLastSequence(err)) throw err;
      }
    }
    return counted(await this.read(key), pool);
  }

  /** The claim under `key`: undefined when there is none, NOT_A_CLAIM when what is there is none. */
  private async read(key: string): Promise<RunClaim | typeof NOT_A_CLAIM | undefined> {
    const held = readKvEntry(await this.kv.get(key), RunClaimSchema);
    return held.kind === 'none' ? undefined : held.kind === 'stray' ? NOT_A_CLAIM : held.record;
  }
}

/** A claim under the older key counts when the controller made it or it names the pool's own node (see LegacyClaims). */
function counted(claim: RunClaim | typeof NOT_A_CLAIM | undefined, pool: string): RunClaim | undefined {
  return claim !== undefined && claim !== NOT_A_CLAIM && (claim.role === 'controller' || claim.holder === pool) ? claim : undefined;
}
