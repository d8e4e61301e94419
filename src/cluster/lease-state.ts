/**
 * A node lease's life as an explicit state machine, pure: one type per state, and the step that
 * takes a state and what happened to the next state. node-lease.ts does the I/O and feeds it.
 *
 *   registering ──created──▶ held ──renewal refused / overdue──▶ lapsed ──retry──▶ registering
 *        │                     ▲ └─renewed─┘                                    (a new epoch)
 *        └──name taken──▶ left ◀──────────────── leave (from any state) ─────────────┘
 *
 * A lease held again after a lapse ("re-registered") is `held` with a higher epoch: the controller
 * counts the runs of the old epoch as orphaned, so a node must not pass the new one off as the old.
 */

export type LeaseState =
  /** Creating the key; `epoch` is the registration being made. */
  | { readonly kind: 'registering'; readonly epoch: number }
  /** The key is ours at `revision`; `confirmedAt` is when the server last accepted it. */
  | { readonly kind: 'held'; readonly epoch: number; readonly revision: number; readonly confirmedAt: number }
  /** The lease of `epoch` is gone (or must be presumed gone); `evidence` says how we know. */
  | { readonly kind: 'lapsed'; readonly epoch: number; readonly evidence: string }
  /** Done: the node left, or its name is someone else's. */
  | { readonly kind: 'left'; readonly evidence: string };

export type LeaseInput =
  /** The server took our record at `revision` (a new key, or our own record found again). */
  | { readonly kind: 'created'; readonly revision: number; readonly at: number }
  | { readonly kind: 'renewed'; readonly revision: number; readonly at: number }
  /** Another live node has the name. */
  | { readonly kind: 'name-taken'; readonly evidence: string }
  /** The server refused the renewal: the key expired, or someone else wrote it. */
  | { readonly kind: 'renewal-refused'; readonly evidence: string }
  /** No renewal confirmed for a whole TTL: the controller will have counted the node lost. */
  | { readonly kind: 'renewal-overdue'; readonly sinceMs: number }
  | { readonly kind: 'retry' }
  | { readonly kind: 'leave'; readonly evidence: string };

/** The state after `input`; an input that does not apply to `state` leaves it as it is. */
export function leaseStep(state: LeaseState, input: LeaseInput): LeaseState {
  if (state.kind === 'left') return state;
  if (input.kind === 'leave') return { kind: 'left', evidence: input.evidence };
  switch (state.kind) {
    case 'registering':
      if (input.kind === 'created') return { kind: 'held', epoch: state.epoch, revision: input.revision, confirmedAt: input.at };
      if (input.kind === 'name-taken') return { kind: 'left', evidence: input.evidence };
      return state;
    case 'held':
      if (input.kind === 'renewed') return { ...state, revision: input.revision, confirmedAt: input.at };
      if (input.kind === 'renewal-refused') return { kind: 'lapsed', epoch: state.epoch, evidence: input.evidence };
      if (input.kind === 'renewal-overdue') return { kind: 'lapsed', epoch: state.epoch, evidence: `no renewal confirmed for ${input.sinceMs} ms` };
      return state;
    case 'lapsed':
      if (input.kind === 'retry') return { kind: 'registering', epoch: state.epoch + 1 };
      return state;
  }
}
