/**
 * What the ask engine needs from the layers below, as small interfaces: the daemon's agent panes
 * implement AskTarget (phase 2: over AgentPane), its pane registry AskDirectory, and the run ledger
 * AskRecorder (`ledger-recorder.ts`). `pane-target.ts` implements AskTarget over a Pane for in-process use and tests.
 */
import type { Disposable } from '../core/disposable.js';
import type { ErrorCode } from '../core/errors.js';
import type { AgentState } from '../agents/index.js';
import type { AskLife, DeliveryStatus } from './lifecycle.js';
import type { TranscriptLocation } from './transcripts/locate.js';

/** A pane an ask can be typed into (and an async reply delivered into). */
export interface AskTarget {
  readonly id: string;
  readonly title: string;
  /** The agent profile's name (claude, codex, …), undefined for a plain program. */
  readonly agent: string | undefined;
  readonly cwd: string;
  readonly alive: boolean;
  /** What the agent is doing now, from the pane's state tracker. */
  readonly state: AgentState;
  /** When the state last changed (ms since the epoch). */
  readonly stateSince: number;
  /** A dialog (or an approval prompt) is open: nothing may be typed. */
  readonly dialogOpen: boolean;
  onStateChange(listener: () => void): Disposable;
  onExit(listener: () => void): Disposable;
  /**
   * Types `text` the way the CLI takes a prompt and resolves once the CLI showed it took it
   * (the agents layer's sendPrompt); rejects with NOT_DELIVERED or TIMEOUT when it could not.
   * Aborted before the CLI took it, it stops typing at once and settles only once what it typed
   * is out of the input box again.
   */
  prompt(text: string, signal: AbortSignal): Promise<void>;
  /** Where the CLI writes its transcript, when it writes one Switchboard reads. */
  transcript(): TranscriptLocation | undefined;
  /** The last reply as the screen shows it (the fallback for CLIs without a transcript). */
  screenReply(question: string): string | null;
}

/** The panes there are. */
export interface AskDirectory {
  list(): readonly AskTarget[];
  get(paneId: string): AskTarget | undefined;
}

/** Who asked. */
export interface Asker {
  /** The asker's pane, where an async reply is delivered. */
  paneId?: string;
  /** The asker's folder (an agent name resolves to the pane of that agent there first). */
  cwd?: string;
  /** A name for the record (the agent, or "cli"). */
  name?: string;
}

/** Who made an ask when no caller is named (the library, the owner's token). */
export const ASK_OWNER = 'owner';

export interface AskRequest {
  /** Who makes it: ASK_OWNER, or the pane whose token calls (it alone and the owner may cancel the ask). Default: the owner. */
  createdBy?: string;
  /** A pane id or title, or an agent name. */
  target: string;
  question: string;
  from?: Asker;
  /** From the ask's creation to its reply, queue time included (default DEFAULT_ASK_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Deliver the outcome into the asker's pane once it is idle (needs from.paneId). */
  deliver?: boolean;
}

/** Everything known of one ask: what the recorder keeps and every surface returns. */
export interface AskRecord extends AskLife {
  id: string;
  /** Who made it (ASK_OWNER or a pane id; absent in asks recorded before it was kept: the owner). */
  createdBy?: string;
  from: Asker | null;
  target: { paneId: string; agent: string | null; title: string };
  question: string;
  /** Its place in the target's line when it was made (0: next). */
  queuedBehind: number;
  delivery: DeliveryStatus;
  deliveredAt: number | null;
  deliveryError: { code: ErrorCode; message: string } | null;
}

/**
 * Keeps every ask: in memory (`memory-recorder.ts`, the library's default) or in the run ledger
 * (`ledger-recorder.ts`, the daemon's). Called on every change of a record, so it must be cheap and
 * must not throw.
 */
export interface AskRecorder {
  /** Records the ask as it stands now; never throws and never waits (a recorder keeps its writes in order). */
  record(ask: Readonly<AskRecord>): void;
  /** The ask as last recorded (every record made before the call included). */
  get(id: string): Promise<AskRecord | undefined>;
  list(): Promise<AskRecord[]>;
}
