/**
 * Runs that run on another machine, as the run service sees them: a controller's cluster
 * (cluster-runs/ implements it over NATS). The run service records such a run's spec and hands it
 * on; the node runs it under its own policy and numbers its events, which come back into this
 * service's ledger (RunLedger.ingest), so every surface lists, follows and replays it as any run.
 */
import type { Disposable } from '../core/disposable.js';
import type { RunMode, RunSpec } from '../ledger/run-model.js';

/** A live node of the cluster, as the surfaces show it. */
export interface ClusterNodeView {
  name: string;
  labels: string[];
  /** The agent CLIs it has, with their versions. */
  clis: { name: string; version: string }[];
  /** The repositories it has at hand, by name (a repository run goes only to a node that has its repository). */
  repos: string[];
  slots: { total: number; free: number };
  /** When its process started, and when its lease was last renewed (ms since the epoch). */
  started_at: number;
  seen_at: number;
}

/** How a node is chosen beyond backend and labels. */
export interface ChooseOptions {
  /** The runs the caller sent each node that take its slots: a lease shows one only once the node pulls it. */
  occupied?: (node: string) => number;
  /** Only this node (the caller named it). */
  node?: string;
  /** Only a node that has this repository. */
  repo?: string;
}

/** How a run is stopped: its whole conversation ended, or only its turn (the CLI's own cancel of a turn). */
export type StopHow = 'cancel' | 'interrupt';

/** What became of a cancel of a run on a node. */
export type RemoteCancel =
  /** The node was told: its events say how the run ended. */
  | 'sent'
  /** No node had started it, and none will (the controller holds its claim): the service records the end. */
  | 'abandoned';

/** Where the run service has a node run it submitted: waiting on it for a slot (no node has it), or sent or about to be sent to a node. */
export type RunPlace = { waiting: true } | { waiting: false; node: string };

export interface RemoteRuns {
  /** True when a live node has `backend`: a run of it goes to the cluster. */
  offers(backend: string): boolean;
  /** The node to take a run of `backend` with every one of `labels` now (the least loaded), or undefined when none can. */
  choose(backend: string, labels: readonly string[], options?: ChooseOptions): string | undefined;
  /** Sends a recorded run to its node (`spec.node`), with the mode the caller asked for (`auto`: the node's choice). */
  dispatch(spec: RunSpec, mode: 'auto' | RunMode): Promise<void>;
  /** Makes sure no node starts the run: true when none had (the run is the service's to end), false when a node has it. */
  abandon(spec: RunSpec): Promise<boolean>;
  /** True when a node (or the controller, giving it up) has claimed the run: it was sent, and must not be sent again. */
  claimed(spec: RunSpec): Promise<boolean>;
  /** Stops a running node run whose decision the controller's policy denies: it ends `failed (policy)` on its node. */
  failForPolicy(spec: RunSpec, violation: { rule: string; reason: string }): Promise<void>;
  /**
   * Stops a run sent to a node: cancelled, or (`interrupt`) its turn ended and its conversation
   * kept open on its node for a follow-up. A run no node started yet is cancelled either way.
   */
  cancel(spec: RunSpec, how?: StopHow): Promise<RemoteCancel>;
  /** The nodes' backends, for a message naming what there is. */
  backendNames(): string[];
  /** The live nodes, by name. */
  nodes(): ClusterNodeView[];
  /** Tells `listener` when a node joins, changes (its free slots) or goes: a run waiting for a slot may go. */
  onNodesChanged(listener: () => void): Disposable;
  /**
   * Where the service has its runs (`placeOf`, undefined for a run it does not place): a run that
   * waits on it for a slot, or that it moved to another node than the ledger last said, is the
   * service's to send or end, never its recorded node's to settle when that node goes.
   */
  trackPlaces(placeOf: (runId: string) => RunPlace | undefined): void;
}
