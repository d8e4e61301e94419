/**
 * Following a run through a run service from its first event to its done, for tests: the events
 * as they come, and a promise of the end.
 */
import type { RunEvent } from '../../src/ledger/run-events.js';
import type { RunService } from '../../src/runs/run-service.js';

export interface FollowedRun {
  readonly events: RunEvent[];
  readonly ended: Promise<void>;
}

/** Follows run `runId` on `service` from its first event to its done, calling `onEvent` with each. */
export function followRun(service: RunService, runId: string, onEvent: (event: RunEvent) => void = () => undefined): FollowedRun {
  const events: RunEvent[] = [];
  const ended = new Promise<void>((resolve, reject) => {
    service
      .subscribe(
        runId,
        0,
        (event) => {
          events.push(event);
          onEvent(event);
        },
        { onEnd: resolve, onError: reject },
      )
      .catch(reject);
  });
  return { events, ended };
}
