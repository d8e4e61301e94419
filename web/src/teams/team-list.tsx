/**
 * Seed 003's team runs in the sidebar: every run the daemon or its ledger knows, newest first
 * (re-read every few seconds: a run started from the CLI or another dashboard announces nothing
 * here), and the board of the one chosen.
 */
import { useEffect, useState } from 'react';
import { errorMessage, RpcError } from '../rpc/rpc-client.js';
import type { TeamRunSummary } from '../rpc/wire.js';
import { useDashboard } from '../ui/dashboard-context.js';
import { TeamBoardDrawer } from './team-board.js';

const POLL_MS = 3_000;

function useTeamRuns(): TeamRunSummary[] {
  const { rpc, toasts } = useDashboard();
  const [runs, setRuns] = useState<TeamRunSummary[]>([]);
  useEffect(() => {
    let reported = false;
    const load = (): void => {
      if (rpc.status.state !== 'open') return;
      rpc.call('team_run_list', {}).then(
        (result) => {
          reported = false;
          setRuns(result.runs);
        },
        (error: unknown) => {
          // One toast until the list loads again, not one every poll.
          if (reported || (error instanceof RpcError && error.dataCode === 'NOT_CONNECTED')) return;
          reported = true;
          toasts.error(`Could not list the team runs: ${errorMessage(error)}`);
        },
      );
    };
    load();
    const timer = window.setInterval(load, POLL_MS);
    const stop = rpc.onOpen(load);
    return () => {
      window.clearInterval(timer);
      stop();
    };
  }, [rpc, toasts]);
  return runs;
}

export function TeamList() {
  const runs = useTeamRuns();
  const [openId, setOpenId] = useState<string | null>(null);
  return (
    <section className="session-list" data-testid="team-list">
      <h2>Team runs</h2>
      {runs.length === 0 && <div className="muted">None yet. Start one with switchboard team run.</div>}
      <ul>
        {runs.map((r) => (
          <li key={r.run_id}>
            <button
              type="button"
              className={`session-item ${openId === r.run_id ? 'active' : ''}`}
              data-testid="team-item"
              data-run-id={r.run_id}
              data-state={r.state}
              title={r.sealed ?? r.run_id}
              onClick={() => setOpenId(r.run_id)}
            >
              <span className="session-title">{r.goal}</span>
              <span className="session-meta">
                {r.preset} · {r.state} · {r.workers} worker{r.workers === 1 ? '' : 's'}
                {r.sealed !== undefined ? ' · sealed' : ''}
              </span>
            </button>
          </li>
        ))}
      </ul>
      {openId !== null && <TeamBoardDrawer key={openId} runId={openId} onClose={() => setOpenId(null)} />}
    </section>
  );
}
