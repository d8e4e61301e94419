/**
 * Sessions that are not panes (structured runs, multi-turn drivers) have logs but no cell in the
 * grid; they are listed here, and one opens in a drawer over the grid. Nothing announces a new
 * session, so the list is re-read every few seconds while connected.
 */
import { useState } from 'react';
import { LogView } from '../log/log-view.js';
import { usePolledList } from '../rpc/use-polled-list.js';
import type { SessionInfo } from '../rpc/wire.js';

const POLL_MS = 5_000;

function useSessions(): SessionInfo[] {
  return usePolledList(async (rpc) => (await rpc.call('log_sessions', {})).sessions.filter((s) => s.kind !== 'pane').reverse(), 'sessions', POLL_MS);
}

export function SessionList() {
  const sessions = useSessions();
  const [open, setOpen] = useState<SessionInfo | null>(null);
  return (
    <section className="session-list" data-testid="session-list">
      <h2>Runs and sessions</h2>
      {sessions.length === 0 && <div className="muted">None yet.</div>}
      <ul>
        {sessions.map((s) => (
          <li key={s.session_id}>
            <button
              type="button"
              className={`session-item ${open?.session_id === s.session_id ? 'active' : ''}`}
              data-testid="session-item"
              data-session-id={s.session_id}
              title={`${s.session_id}\n${s.created_at}`}
              onClick={() => setOpen(s)}
            >
              <span className="session-title">{s.title || s.session_id}</span>
              <span className="session-meta">
                {s.agent ?? s.kind} · {s.finished ? 'finished' : 'live'}
              </span>
            </button>
          </li>
        ))}
      </ul>
      {open && (
        <div className="drawer" data-testid="session-drawer" data-session-id={open.session_id}>
          <header className="drawer-header">
            <span className="pane-title">{open.title || open.session_id}</span>
            {open.agent && <span className="pane-agent">{open.agent}</span>}
            <span className="spacer" />
            <button type="button" className="icon-button" data-testid="session-drawer-close" onClick={() => setOpen(null)}>
              close
            </button>
          </header>
          <LogView key={open.session_id} sessionId={open.session_id} outputFirst />
        </div>
      )}
    </section>
  );
}
