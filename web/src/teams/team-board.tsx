/**
 * One team run's board (seed 003), live from the daemon: the goal, the plan and its next step,
 * each worker (role, agent, state, folder, last lines) with what a person may do to it, the
 * planner's calls and whether each result reached the planner, the approvals its policies
 * decided, the report, and the risk gate's held texts as a dialog. Everything here is an RPC of
 * the daemon's, so a second dashboard or the CLI shows and steers the same run.
 */
import { useState } from 'react';
import { errorMessage } from '../rpc/rpc-client.js';
import type { MethodName, Methods, TeamBoard } from '../rpc/wire.js';
import { useDashboard } from '../ui/dashboard-context.js';
import { HeldDialog } from './held-dialog.js';
import { ReportPanel } from './report-panel.js';
import { TeamComposer } from './team-composer.js';
import { useTeamBoard } from './use-team-board.js';

type Worker = TeamBoard['workers'][number];
type Mark = Methods['team_run_mark']['params']['mark'];
const ENDED = new Set(['completed', 'failed', 'cancelled']);
const MARKS: { mark: Mark; label: string }[] = [
  { mark: 'completed', label: 'done' },
  { mark: 'stuck', label: 'blocked' },
  { mark: 'needs_input', label: 'needs input' },
  { mark: null, label: 'unmark' },
];

/** Brings a worker's own pane (its terminal, to take it over by typing) into view. */
function showPane(paneId: string): void {
  const card = document.querySelector(`[data-testid="pane"][data-pane-id="${CSS.escape(paneId)}"]`);
  card?.scrollIntoView({ block: 'nearest' });
  card?.querySelector<HTMLElement>('.terminal-host')?.dispatchEvent(new MouseEvent('mousedown', { bubbles: true }));
}

function useAct(): <M extends MethodName>(method: M, params: Methods[M]['params'], done?: string) => void {
  const { rpc, toasts } = useDashboard();
  return (method, params, done) => {
    rpc.call(method, params).then(
      () => {
        if (done !== undefined) toasts.info(done);
      },
      (error: unknown) => toasts.error(`${method.replace(/^team_run_/, '')}: ${errorMessage(error)}`),
    );
  };
}

function WorkerCard({ runId, worker, focused, over, onFocus }: { runId: string; worker: Worker; focused: boolean; over: boolean; onFocus: () => void }) {
  const act = useAct();
  return (
    <li className={`team-worker ${focused ? 'team-worker-focused' : ''}`} data-testid="team-worker" data-worker-id={worker.id} data-state={worker.state} aria-current={focused}>
      <div className="team-row">
        <button type="button" className="link-button team-worker-name" data-testid="worker-focus" title="Focus: Ctrl+Enter sends here" onClick={onFocus}>
          {worker.id}
        </button>
        <span className="pane-agent">{worker.agent}</span>
        <span className={`team-state team-state-${worker.state}`} data-testid="worker-state">
          {worker.state.replace('_', ' ')}
        </span>
        <span className="spacer" />
        {worker.pane_id !== null && (
          <button type="button" className="icon-button" data-testid="worker-terminal" title="Show its terminal, to type in it" onClick={() => showPane(worker.pane_id ?? '')}>
            terminal
          </button>
        )}
      </div>
      <div className="muted team-folder" title={worker.folder}>
        {worker.folder}
      </div>
      {(worker.branch !== null || worker.last_check !== null) && (
        <div className="muted team-folder">
          {worker.branch !== null && (
            <span data-testid="worker-branch">
              {worker.branch} · {worker.changed_files ?? 0} file{worker.changed_files === 1 ? '' : 's'} changed
            </span>
          )}
          {worker.branch !== null && worker.last_check !== null && ' · '}
          {worker.last_check !== null && (
            <span className={worker.last_check.passed ? '' : 'team-bad'} data-testid="worker-check" title={worker.last_check.command}>
              check {worker.last_check.passed ? 'passed' : `failed (exit ${worker.last_check.exit_code ?? 'none'})`}
            </span>
          )}
        </div>
      )}
      {worker.last_lines.length > 0 && (
        <pre className="team-last-lines" data-testid="worker-lines">
          {worker.last_lines.join('\n')}
        </pre>
      )}
      {!over && (
        <div className="team-row-actions">
          {MARKS.map(({ mark, label }) => (
            <button key={label} type="button" className="icon-button" data-testid={`worker-mark-${mark ?? 'none'}`} onClick={() => act('team_run_mark', { run_id: runId, worker_id: worker.id, mark })}>
              {label}
            </button>
          ))}
          {(worker.state === 'stuck' || worker.state === 'error') && (
            <button type="button" className="icon-button danger" data-testid="worker-restart" title="Close its pane and open a new one" onClick={() => act('team_run_restart', { run_id: runId, worker_id: worker.id }, `${worker.id} restarted`)}>
              restart
            </button>
          )}
        </div>
      )}
    </li>
  );
}

function Plan({ board }: { board: TeamBoard }) {
  if (board.tasks.length === 0) return <div className="muted">No tasks yet.</div>;
  return (
    <ol className="team-tasks" data-testid="team-tasks">
      {board.tasks.map((task) => (
        <li key={task.id} className={`team-task team-task-${task.state}`} data-testid="team-task" data-task-id={task.id} data-state={task.state}>
          <span className="team-task-state">{task.state}</span> {task.title}
          {task.owner !== null && <span className="muted"> · {task.owner}</span>}
          {task.depends_on.length > 0 && <span className="muted"> · after {task.depends_on.join(', ')}</span>}
          {task.failed_check !== null && (
            <pre className="team-check-failed" data-testid="task-failed-check">
              {task.failed_check}
            </pre>
          )}
        </li>
      ))}
    </ol>
  );
}

function Calls({ board, over }: { board: TeamBoard; over: boolean }) {
  const act = useAct();
  if (board.calls.length === 0) return <div className="muted">No calls yet.</div>;
  return (
    <ol className="team-calls" data-testid="team-calls">
      {board.calls.map((call) => (
        <li key={call.id} className="team-call" data-testid="team-call" data-call-id={call.id} data-delivered={call.delivered}>
          <span className="team-call-method">{call.method}</span> <span className={call.outcome === 'ok' ? '' : 'team-bad'}>{call.outcome}</span>{' '}
          <span className={`muted team-delivered-${call.delivered}`}>{call.delivered}</span>
          {!over && (call.delivered === 'undelivered' || call.delivered === 'unconfirmed') && (
            <button type="button" className="icon-button" data-testid="call-resend" onClick={() => act('team_run_resend', { run_id: board.run_id, call_id: call.id }, `Resending the result of ${call.method}`)}>
              resend
            </button>
          )}
        </li>
      ))}
    </ol>
  );
}

function RunActions({ board, onClose }: { board: TeamBoard; onClose: () => void }) {
  const act = useAct();
  const [closeAgents, setCloseAgents] = useState(false);
  const id = board.run_id;
  const over = ENDED.has(board.state);
  return (
    <header className="drawer-header">
      <span className="pane-title">{id}</span>
      <span className="pane-agent">{board.preset}</span>
      <span className={`team-state team-state-${board.state}`} data-testid="team-state" title={board.why}>
        {board.state}
      </span>
      <span className="spacer" />
      {board.state === 'running' && (
        <button type="button" className="icon-button" data-testid="team-pause" onClick={() => act('team_run_pause', { run_id: id })}>
          pause
        </button>
      )}
      {board.state === 'paused' && (
        <button type="button" className="icon-button" data-testid="team-resume" onClick={() => act('team_run_resume', { run_id: id })}>
          resume
        </button>
      )}
      {(!over || board.workers.some((w) => w.pane_id !== null)) && (
        <>
          <label className="muted" title="Close the agents' panes as the run ends">
            <input type="checkbox" data-testid="team-close-agents" checked={closeAgents} onChange={(e) => setCloseAgents(e.target.checked)} /> close agents
          </label>
          <button type="button" className="icon-button danger" data-testid="team-end" onClick={() => act('team_run_end', { run_id: id, close_agents: closeAgents }, over ? 'Closed' : 'Ended')}>
            end
          </button>
        </>
      )}
      <button type="button" className="icon-button" data-testid="team-board-close" onClick={onClose}>
        close
      </button>
    </header>
  );
}

export function TeamBoardDrawer({ runId, onClose }: { runId: string; onClose: () => void }) {
  const { board, problem } = useTeamBoard(runId);
  const [focused, setFocused] = useState<string | null>(null);
  const [showReport, setShowReport] = useState(false);
  if (board === null) {
    return (
      <div className="drawer team-board" data-testid="team-board" data-run-id={runId}>
        <header className="drawer-header">
          <span className="pane-title">{runId}</span>
          <span className="spacer" />
          <button type="button" className="icon-button" data-testid="team-board-close" onClick={onClose}>
            close
          </button>
        </header>
        <div className="muted team-section">{problem ?? 'Loading…'}</div>
      </div>
    );
  }
  const over = ENDED.has(board.state);
  const target = focused !== null && board.workers.some((w) => w.id === focused) ? focused : null;
  const held = board.confirmations[0];
  return (
    <div className="drawer team-board" data-testid="team-board" data-run-id={runId} data-version={board.version}>
      <RunActions board={board} onClose={onClose} />
      <div className="team-scroll">
        <section className="team-section">
          <div className="team-goal" data-testid="team-goal">
            {board.goal}
          </div>
          <div className="muted" data-testid="team-why">
            {board.why}
          </div>
          {board.summary !== null && <div data-testid="team-summary">{board.summary}</div>}
          {problem !== null && <div className="form-error">{problem}</div>}
        </section>
        <section className="team-section">
          <h3>Plan</h3>
          <div className="team-next">
            <span className="muted">Next: </span>
            <span data-testid="team-next-step">{board.next_step ?? 'nothing open'}</span>
          </div>
          <Plan board={board} />
        </section>
        <section className="team-section">
          <h3>
            Workers <span className="muted">· planner {board.planner.agent}: {board.planner.state.replace('_', ' ')}</span>
          </h3>
          <ul className="team-workers">
            {board.workers.map((w) => (
              <WorkerCard key={w.id} runId={runId} worker={w} focused={w.id === target} over={over} onFocus={() => setFocused(w.id)} />
            ))}
          </ul>
        </section>
        <section className="team-section">
          <h3>Planner calls</h3>
          <Calls board={board} over={over} />
        </section>
        {board.approvals.length > 0 && (
          <section className="team-section">
            <h3>Approvals</h3>
            <ol className="team-calls" data-testid="team-approvals">
              {board.approvals.map((a, i) => (
                <li key={i}>
                  {a.member}: {a.what} → <b>{a.decision}</b> <span className="muted">({a.by}: {a.reason})</span>
                </li>
              ))}
            </ol>
          </section>
        )}
        <section className="team-section">
          <h3>
            <button type="button" className="link-button" data-testid="team-report-toggle" aria-expanded={showReport} onClick={() => setShowReport((v) => !v)}>
              {showReport ? '▾' : '▸'} Report
            </button>
          </h3>
          {showReport && <ReportPanel runId={runId} />}
        </section>
      </div>
      {!over && <TeamComposer runId={runId} focused={target} disabled={board.state === 'starting'} />}
      {held && !over && <HeldDialog key={held.id} runId={runId} held={held} waiting={board.confirmations.length} />}
    </div>
  );
}
