/**
 * The contract of a multi-turn driver: one agent process (or one CLI-side conversation) kept across
 * prompts, its whole log in one MsgStore, and every permission request the CLI raises answered by
 * Switchboard: by a judge of the caller's (a run's governance), or else by the approval policy,
 * then the caller's callback, then "deny". Claude Code stream-json, the Codex app server and ACP
 * (Gemini CLI, OpenCode) implement it.
 */
import type { Event } from '../core/emitter.js';
import type { NormalizedEntry } from '../output/entry.js';
import type { MsgStore, MsgStoreOptions } from '../output/msg-store.js';
import type { ApprovalPolicy } from '../approvals/policy/index.js';
import type { PermissionAnswer, PermissionJudge, PermissionRequest } from './permission.js';
import type { AgentCapabilities, AgentHealth, EndStatus } from './capabilities.js';

export interface ConversationOptions {
  cwd: string;
  /** Run from this isolated HOME against a model server (tests, demos). */
  sandbox?: { home: string; modelUrl: string };
  /** Judges every permission request (default: ask for everything); unused when a `judge` is given. */
  policy?: ApprovalPolicy;
  /** Decides what the policy leaves open ("ask"); without it such a request is denied. */
  onPermission?: (request: PermissionRequest) => Promise<'allow' | 'deny'>;
  /**
   * Decides every request itself, in place of `policy` and `onPermission`: a judge with a chain of
   * its own (a run's governance, which records the decision with its rule). Its words are the ones
   * the session's entries show. A judge that fails denies.
   */
  judge?: PermissionJudge;
  /** Variables on top of the profile's and the sandbox's. */
  env?: Record<string, string>;
  /** Arguments after the profile's own. */
  args?: string[];
  store?: MsgStoreOptions<NormalizedEntry>;
  /**
   * The CLI's own id of an earlier conversation (an `agentSessionId` of another, possibly dead,
   * process with the same HOME or sandbox home), to be continued with its earlier context instead
   * of starting a new one: `claude --resume`, Codex `thread/resume`, ACP `session/load`. Its
   * earlier turns are the CLI's context, not entries of this conversation (which opens with one
   * system note saying what it resumed). A resume the CLI refuses (an id it does not know, an ACP
   * agent without `loadSession`) never starts a new conversation in its place: `open()` rejects
   * with AGENT_ERROR and the CLI's reason, details `{ agent, resume, reason }`.
   */
  resume?: string;
  /** Aborting ends the session and its process tree. */
  signal?: AbortSignal;
}

export interface TurnResult {
  status: EndStatus;
  /** The entries of this turn only (the session's MsgStore has them all). */
  entries: NormalizedEntry[];
  /** Every permission request of this turn and how it was answered. */
  permissions: PermissionAnswer[];
  /** Why the agent ended the turn, in its own words where it says (end_turn, cancelled, …). */
  stopReason: string | null;
  durationMs: number;
}

/** A piece of an agent's reply, and the last entry recorded before it. */
export interface ReplyPiece {
  text: string;
  afterSeq: number;
}

export interface Conversation {
  /** Switchboard's id for the session (also the MsgStore's). */
  readonly id: string;
  /** The CLI's own conversation id once it said it (for resume), else null. */
  readonly agentSessionId: string | null;
  /** The whole session's entries: history then live, for any number of readers. */
  readonly entries: MsgStore<NormalizedEntry>;
  /**
   * Pieces of the agent's reply as the CLI streams them (where it does), each after the entries
   * recorded so far (`afterSeq`: the store's last seq when it came). The whole message still comes
   * as an entry once written; the pieces are for readers that show it as it is written.
   */
  readonly pieces?: Event<ReplyPiece>;
  /** Sends a prompt and resolves when the agent ends its turn. One turn at a time. */
  prompt(text: string, options?: { signal?: AbortSignal }): Promise<TurnResult>;
  /** Stops the turn under way (the session stays usable); no-op between turns. */
  cancelTurn(): Promise<void>;
  /** Ends the session: its process tree is gone and its MsgStore finished when this resolves. */
  close(): Promise<void>;
}

export interface ConversationDriver {
  readonly name: string;
  capabilities(): AgentCapabilities;
  health(): Promise<AgentHealth>;
  open(options: ConversationOptions): Promise<Conversation>;
}
