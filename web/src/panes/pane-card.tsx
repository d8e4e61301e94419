/**
 * One cell of the grid: a header (title, agent, state, connection, search, layout and lifecycle
 * buttons, broadcast selection), the approval banner while one is pending, and the live terminal
 * or the session's structured log. The terminal stays mounted while the log is shown (or another
 * pane is maximized), so its connection and scrollback survive the switch.
 */
import { useEffect, useRef, useState, type RefObject } from 'react';
import { LogView } from '../log/log-view.js';
import type { ConnectionStatus } from '../rpc/reconnecting-socket.js';
import { errorMessage } from '../rpc/rpc-client.js';
import { SearchBox } from '../terminal/search-box.js';
import { TerminalController } from '../terminal/terminal-controller.js';
import { ConnectionIndicator } from '../ui/connection-status.js';
import { useDashboard } from '../ui/dashboard-context.js';
import { ApprovalBanner } from './approval-banner.js';
import type { PaneView } from './pane-store.js';
import { StateBadge } from './state-badge.js';

export interface PaneLayoutControls {
  maximized: boolean;
  canMoveLeft: boolean;
  canMoveRight: boolean;
  selected: boolean;
  onToggleMaximize: () => void;
  onMove: (delta: -1 | 1) => void;
  onToggleSelected: () => void;
}

/** The live terminal of a pane, made once per pane and host element. */
function useTerminal(paneId: string, onError: (message: string) => void): { host: RefObject<HTMLDivElement | null>; controller: TerminalController | null; connection: ConnectionStatus } {
  const host = useRef<HTMLDivElement>(null);
  const [controller, setController] = useState<TerminalController | null>(null);
  const [connection, setConnection] = useState<ConnectionStatus>({ state: 'connecting' });
  useEffect(() => {
    if (!host.current) return;
    const made = new TerminalController(paneId, host.current, onError);
    setController(made);
    setConnection(made.connection);
    const stopWatching = made.onConnection(setConnection);
    return () => {
      stopWatching();
      made.dispose();
    };
  }, [paneId, onError]);
  return { host, controller, connection };
}

export function PaneCard({ view, layout }: { view: PaneView; layout: PaneLayoutControls }) {
  const { rpc, panes, toasts } = useDashboard();
  const { info } = view;
  const paneId = info.pane_id;
  const { host, controller, connection } = useTerminal(paneId, toasts.error);
  const [showLog, setShowLog] = useState(false);
  const [searching, setSearching] = useState(false);
  const [busy, setBusy] = useState<'kill' | 'remove' | null>(null);

  // Showing the terminal again (from the log, or after a layout change) fits it to its cell.
  useEffect(() => {
    if (!showLog) controller?.fit();
  }, [showLog, controller, layout.maximized]);

  const lifecycle = async (action: 'kill' | 'remove'): Promise<void> => {
    setBusy(action);
    try {
      await rpc.call(action, { pane_id: paneId });
      if (action === 'remove') panes.remove(paneId);
    } catch (error) {
      toasts.error(`Could not ${action} ${info.title || paneId}: ${errorMessage(error)}`);
    } finally {
      setBusy(null);
    }
  };

  const waiting = view.state === 'waiting_approval';
  return (
    <section className={`pane ${layout.maximized ? 'pane-maximized' : ''}`} data-testid="pane" data-pane-id={paneId} data-state={view.state ?? ''}>
      <header className="pane-header">
        <span className="pane-title" data-testid="pane-title" title={`${info.command}\n${info.cwd}`}>
          {info.title || info.command || paneId}
        </span>
        {info.agent && (
          <span className="pane-agent" data-testid="pane-agent" title={info.agent.version ?? undefined}>
            {info.agent.name}
          </span>
        )}
        {info.node && (
          <span className="pane-node" data-testid="pane-node" title={`On cluster node ${info.node}`}>
            on {info.node}
          </span>
        )}
        <StateBadge view={view} />
        <ConnectionIndicator status={connection} onRetry={() => controller?.retryNow()} testId="pane-connection" compact />
        {/* One group: in a narrow cell it wraps to its own line as a whole. */}
        <span className="pane-actions">
          <button
            type="button"
            className={`icon-button ${searching ? 'active' : ''}`}
            data-testid="search-toggle"
            aria-pressed={searching}
            title="Search the scrollback"
            disabled={showLog}
            onClick={() => setSearching((v) => !v)}
          >
            find
          </button>
          <button
            type="button"
            className={`icon-button ${showLog ? 'active' : ''}`}
            data-testid="log-toggle"
            aria-pressed={showLog}
            title={info.node ? `Structured log (read from node ${info.node})` : 'Structured log'}
            onClick={() => setShowLog((v) => !v)}
          >
            log
          </button>
          <button type="button" className="icon-button" data-testid="move-left" title="Move left" disabled={!layout.canMoveLeft} onClick={() => layout.onMove(-1)}>
            ◀
          </button>
          <button type="button" className="icon-button" data-testid="move-right" title="Move right" disabled={!layout.canMoveRight} onClick={() => layout.onMove(1)}>
            ▶
          </button>
          <button type="button" className="icon-button" data-testid="maximize" aria-pressed={layout.maximized} title={layout.maximized ? 'Restore' : 'Maximize'} onClick={layout.onToggleMaximize}>
            {layout.maximized ? '⤡' : '⤢'}
          </button>
          <label className="select-box" title="Select for broadcast">
            <input type="checkbox" data-testid="broadcast-select" checked={layout.selected} onChange={layout.onToggleSelected} />
          </label>
          {info.alive ? (
            <button type="button" className="icon-button danger" data-testid="kill" title="Kill the pane's program" disabled={busy !== null} onClick={() => void lifecycle('kill')}>
              {busy === 'kill' ? 'killing…' : 'kill'}
            </button>
          ) : (
            <button type="button" className="icon-button" data-testid="remove" title="Remove the pane" disabled={busy !== null} onClick={() => void lifecycle('remove')}>
              {busy === 'remove' ? 'closing…' : 'close'}
            </button>
          )}
        </span>
      </header>
      {waiting && <ApprovalBanner paneId={paneId} approval={view.approval} />}
      {view.state === 'waiting_input' && view.question && (
        <div className="pane-notice" data-testid="pane-question">
          {view.question}
        </div>
      )}
      {view.state === 'error' && view.error && (
        <div className="pane-notice pane-notice-error" data-testid="pane-error">
          {view.error}
        </div>
      )}
      <div className="pane-body">
        <div className="terminal-host" data-testid="terminal" ref={host} hidden={showLog} onMouseDown={() => controller?.focus()} />
        {searching && !showLog && <SearchBox controller={controller} onClose={() => setSearching(false)} />}
        {showLog && <LogView sessionId={paneId} outputFirst={!info.agent} {...(info.node !== undefined && { node: info.node })} />}
      </div>
    </section>
  );
}
