/**
 * Seed 003's team runs in the sidebar: every run the daemon or its ledger knows, newest first
 * (re-read every few seconds: a run started from the CLI or another dashboard announces nothing
 * here), and the board of the one chosen.
 */
import { useState } from 'react';
import { usePolledList } from '../rpc/use-polled-list.js';
import type { TeamRunSummary } from '../rpc/wire.js';
import { TeamBoardDrawer } from './team-board.js';

const POLL_MS = 3_000;

function useTeamRuns(): TeamRunSummary[] {
  return usePolledList(async (rpc) => (await rpc.call('team_run_list', {})).runs, 'team runs', POLL_MS);
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
