/**
 * A team run's board, live: `team_run_get` with the version last seen, so the daemon answers as
 * soon as the board changes (or after BOARD_WAIT_MS with the same board). One watch at a time;
 * it waits for the socket to come back rather than spinning while the daemon is away.
 */
import { useEffect, useState } from 'react';
import { errorMessage, RpcError } from '../rpc/rpc-client.js';
import type { TeamBoard } from '../rpc/wire.js';
import { useDashboard } from '../ui/dashboard-context.js';

/** Below the client's own time limit for team_run_get (rpc-client.ts), so a quiet board is not an error. */
const BOARD_WAIT_MS = 20_000;
/** After an error other than a lost connection: the next try. */
const RETRY_MS = 3_000;
/** Answers that another try would only repeat. */
const FINAL = new Set(['RUN_NOT_FOUND', 'KEY_MISMATCH', 'FORBIDDEN']);

export interface BoardWatch {
  board: TeamBoard | null;
  /** Why there is no board to show (the run is gone, or only its record is left). */
  problem: string | null;
}

export function useTeamBoard(runId: string): BoardWatch {
  const { rpc } = useDashboard();
  const [watch, setWatch] = useState<BoardWatch>({ board: null, problem: null });
  useEffect(() => {
    let stopped = false;
    let version: number | undefined;
    let watching = false;
    let retry: number | undefined;
    const next = (): void => {
      if (stopped || watching || rpc.status.state !== 'open') return;
      watching = true;
      const params = version === undefined ? { run_id: runId } : { run_id: runId, after_version: version, wait_ms: BOARD_WAIT_MS };
      rpc.call('team_run_get', params).then(
        (board) => {
          watching = false;
          if (stopped) return;
          // The same version back at once: a run only the ledger has (nothing will change), or a
          // quiet board's wait that ran out. Either way, look again a little later, not at once.
          const unchanged = version === board.version;
          version = board.version;
          setWatch({ board, problem: null });
          if (unchanged) retry = window.setTimeout(next, RETRY_MS);
          else next();
        },
        (error: unknown) => {
          watching = false;
          if (stopped) return;
          // A lost connection: onOpen below starts the watch again.
          if (error instanceof RpcError && error.dataCode === 'NOT_CONNECTED') return;
          setWatch((w) => ({ board: w.board, problem: errorMessage(error) }));
          if (!(error instanceof RpcError && FINAL.has(error.dataCode))) retry = window.setTimeout(next, RETRY_MS);
        },
      );
    };
    next();
    const stopOpen = rpc.onOpen(next);
    return () => {
      stopped = true;
      window.clearTimeout(retry);
      stopOpen();
    };
  }, [rpc, runId]);
  return watch;
}
