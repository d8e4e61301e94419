/**
 * The dashboard's page: a top bar (connection, columns, broadcast), the new-pane form on the
 * left, the pane grid, and the toasts.
 */
import { useEffect, useState, useSyncExternalStore } from 'react';
import { BroadcastBar } from './panes/broadcast-bar.js';
import { NewPaneForm } from './panes/new-pane-form.js';
import { PaneGrid } from './panes/pane-grid.js';
import type { ConnectionStatus } from './rpc/reconnecting-socket.js';
import { SessionList } from './sessions/session-list.js';
import { RunList } from './sessions/run-list.js';
import { TeamList } from './teams/team-list.js';
import { ConnectionIndicator } from './ui/connection-status.js';
import { isLoggedOut } from './ui/login-check.js';
import { useDashboard } from './ui/dashboard-context.js';
import { Toasts } from './ui/toasts.js';
import { isColumnCount, useStoredState } from './ui/stored-state.js';

function useRpcStatus(): ConnectionStatus {
  const { rpc } = useDashboard();
  const [status, setStatus] = useState(rpc.status);
  useEffect(() => {
    setStatus(rpc.status);
    return rpc.onStatus(setStatus);
  }, [rpc]);
  return status;
}

/** After each failed connect: is it the session that is gone? Cleared by the next connect. */
function useLoggedOut(status: ConnectionStatus): boolean {
  const [loggedOut, setLoggedOut] = useState(false);
  useEffect(() => {
    if (status.state === 'open') setLoggedOut(false);
    if (status.state !== 'waiting') return;
    let current = true;
    void isLoggedOut().then((out) => {
      if (current) setLoggedOut(out);
    });
    return () => {
      current = false;
    };
  }, [status]);
  return loggedOut;
}

export function App() {
  const { rpc, panes, toasts } = useDashboard();
  const views = useSyncExternalStore(panes.subscribe, panes.getSnapshot);
  const status = useRpcStatus();
  const loggedOut = useLoggedOut(status);
  const [columns, setColumns] = useStoredState('switchboard.columns', 2, isColumnCount);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());

  const toggleSelected = (paneId: string): void => {
    setSelected((current) => {
      const next = new Set(current);
      if (!next.delete(paneId)) next.add(paneId);
      return next;
    });
  };
  // Only panes that still exist and can take input are sent to.
  const targets = views.filter((v) => selected.has(v.info.pane_id) && v.info.alive).map((v) => ({ paneId: v.info.pane_id, title: v.info.title || v.info.pane_id }));

  return (
    <div className="app">
      <header className="topbar">
        <span className="brand">Switchboard</span>
        <ConnectionIndicator status={status} onRetry={() => rpc.retryNow()} testId="connection-status" />
        <span className="columns" role="group" aria-label="Columns">
          {[1, 2, 3, 4].map((n) => (
            <button key={n} type="button" className={`icon-button ${columns === n ? 'active' : ''}`} data-testid={`columns-${n}`} aria-pressed={columns === n} title={`${n} column${n === 1 ? '' : 's'}`} onClick={() => setColumns(n)}>
              {n}
            </button>
          ))}
        </span>
        <BroadcastBar targets={targets} />
        <span className="pane-count" data-testid="pane-count">
          {views.length} pane{views.length === 1 ? '' : 's'}
        </span>
      </header>
      {loggedOut && (
        <div className="logged-out" data-testid="logged-out" role="alert">
          This browser is no longer logged in (the daemon restarted, or its session ended). Open a new login link: run <code>switchboard dashboard</code>.
        </div>
      )}
      <div className="workspace">
        <aside className="sidebar">
          <NewPaneForm />
          <SessionList />
          <RunList />
          <TeamList />
        </aside>
        <PaneGrid views={views} columns={columns} selected={selected} onToggleSelected={toggleSelected} />
      </div>
      <Toasts store={toasts} />
    </div>
  );
}
