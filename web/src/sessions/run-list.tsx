/**
 * The agent bridge's runs (seed 004): every run from the run ledger with its state, newest first
 * (re-read every few seconds: nothing announces a new run), and one run in a drawer: its events as
 * recorded, then live while it runs (`run_subscribe`, resumed after the last event seen when the
 * socket comes back), a replay of a finished one, and Cancel while it is not over.
 */
import { useEffect, useState } from 'react';
import { errorMessage, RpcError } from '../rpc/rpc-client.js';
import { usePolledList } from '../rpc/use-polled-list.js';
import type { ClusterNode, RunEvent, RunView } from '../rpc/wire.js';
import { useDashboard } from '../ui/dashboard-context.js';

const POLL_MS = 3_000;
/** Events a drawer keeps on screen (the ledger keeps them all). */
const MAX_SHOWN_EVENTS = 2_000;
const ENDED = new Set(['completed', 'failed', 'cancelled']);

/** The controller's live nodes, read every few seconds (none on a daemon that is no controller). */
export function useClusterNodes(): ClusterNode[] {
  // A daemon with no cluster lists none; one without the bridge answers CONFLICT.
  return usePolledList(async (rpc) => (await rpc.call('run_nodes', {})).nodes, 'cluster nodes', POLL_MS, ['CONFLICT']);
}

function useRuns(): RunView[] {
  // A daemon without the bridge answers CONFLICT: an empty list, not an error every poll.
  return usePolledList(async (rpc) => (await rpc.call('run_list', { limit: 50 })).runs, 'runs', POLL_MS, ['CONFLICT']);
}

/** The events shown of a run, whether it has ended, and its CLI's conversation id (from any of its events). */
interface RunEvents {
  events: RunEvent[];
  ended: boolean;
  conversation: string | undefined;
}

/** A run's events: recorded then live, from `run_subscribe`, resumed after the last one on every reconnect. */
function useRunEvents(runId: string): RunEvents {
  const { rpc, toasts } = useDashboard();
  const [state, setState] = useState<RunEvents>({ events: [], ended: false, conversation: undefined });
  useEffect(() => {
    let last = 0;
    let subscription: string | undefined;
    let done = false;
    const offEvent = rpc.onNotification('run_event', (n) => {
      if (n.subscription !== subscription || n.event.seq <= last) return;
      last = n.event.seq;
      // Kept apart from the events shown: the CLI says its id early, and a long run's first events scroll out.
      setState((s) => ({ events: [...s.events, n.event].slice(-MAX_SHOWN_EVENTS), ended: s.ended, conversation: conversationOf(n.event) ?? s.conversation }));
    });
    const offEnd = rpc.onNotification('run_stream_end', (n) => {
      if (n.subscription !== subscription) return;
      subscription = undefined;
      if (n.reason === 'ended') {
        done = true;
        setState((s) => ({ ...s, ended: true }));
      }
    });
    const follow = (): void => {
      if (done || rpc.status.state !== 'open') return;
      rpc.call('run_subscribe', { run_id: runId, after: last, schema_version: 'v2' }).then(
        (result) => {
          subscription = result.subscription;
        },
        (error: unknown) => {
          if (!(error instanceof RpcError && error.dataCode === 'NOT_CONNECTED')) toasts.error(`Could not follow ${runId}: ${errorMessage(error)}`);
        },
      );
    };
    follow();
    const stopOpen = rpc.onOpen(follow);
    return () => {
      offEvent();
      offEnd();
      stopOpen();
      if (subscription !== undefined) void rpc.call('unsubscribe', { subscription }).catch(() => undefined);
    };
  }, [rpc, toasts, runId]);
  return state;
}

function eventLine(e: RunEvent): { kind: string; text: string } {
  const text = e.schema_version === 'v2' ? e.compat.text : e.text;
  const status = e.schema_version === 'v2' ? e.compat.status : e.status;
  if (e.type === 'state') return { kind: 'state', text: `→ ${status}${text !== '' ? `: ${text}` : ''}` };
  if (e.type === 'decision') return { kind: 'decision', text: `${status}: ${text}` };
  if (e.type === 'tool_result') return { kind: 'tool_result', text: `${status}${text !== '' ? `: ${text}` : ''}` };
  if (e.type === 'done') return { kind: 'done', text: `${status}: ${text}` };
  return { kind: e.type, text };
}

/** The agent CLI's conversation id an event records (an `agent_session` notice), which a new run can resume. */
function conversationOf(e: RunEvent): string | undefined {
  return e.schema_version === 'v2' && e.type === 'notice' && typeof e.data.agent_session === 'string' ? e.data.agent_session : undefined;
}

/**
 * Resumes a run's conversation in a new run (run_submit `resume`): for an orphaned run, whose node
 * was lost, the person's choice of where it goes on; for an ended one, another prompt after it.
 */
function ResumeRun({ run, nodes, onResumed }: { run: RunView; nodes: ClusterNode[]; onResumed: (runId: string) => void }) {
  const { rpc, toasts } = useDashboard();
  const [prompt, setPrompt] = useState('Go on where you left off.');
  const [node, setNode] = useState('');
  const [busy, setBusy] = useState(false);
  // An orphaned run's node is gone; an ended run's own node still has its CLI's conversation files.
  const able = nodes.filter((n) => n.clis.some((c) => c.name === run.backend));
  const resume = (): void => {
    setBusy(true);
    rpc
      .call('run_submit', { backend: run.backend, prompt, resume: run.id, ...(node !== '' ? { node } : {}) })
      .then(({ run: next }) => {
        toasts.info(`${run.id} resumed as ${next.id}${next.node !== undefined ? ` on ${next.node}` : ''}`);
        onResumed(next.id);
      })
      .catch((error: unknown) => toasts.error(`Could not resume ${run.id}: ${errorMessage(error)}`))
      .finally(() => setBusy(false));
  };
  return (
    <form
      className="run-resume"
      data-testid="run-resume"
      onSubmit={(e) => {
        e.preventDefault();
        resume();
      }}
    >
      <input aria-label="prompt to resume with" data-testid="run-resume-prompt" value={prompt} onChange={(e) => setPrompt(e.target.value)} />
      {run.node !== undefined && (
        <select aria-label="node to resume on" data-testid="run-resume-node" value={node} onChange={(e) => setNode(e.target.value)}>
          <option value="">any node</option>
          {able.map((n) => (
            <option key={n.name} value={n.name}>
              {n.name} ({n.slots.free} free{n.name === run.node ? ', where it ran' : ''})
            </option>
          ))}
        </select>
      )}
      <button type="submit" className="icon-button" data-testid="run-resume-submit" disabled={busy || prompt.trim() === ''}>
        resume
      </button>
    </form>
  );
}

function RunDrawer({ run, nodes, onClose, onResumed }: { run: RunView; nodes: ClusterNode[]; onClose: () => void; onResumed: (runId: string) => void }) {
  const { rpc, toasts } = useDashboard();
  const { events, ended, conversation } = useRunEvents(run.id);
  const over = ended || ENDED.has(run.status);
  const cancel = (): void => {
    rpc.call('run_cancel', { run_id: run.id }).catch((error: unknown) => toasts.error(`Could not cancel ${run.id}: ${errorMessage(error)}`));
  };
  // The turn only: the CLI keeps the conversation, and the next prompt follows up in it.
  const interrupt = (): void => {
    rpc.call('run_interrupt', { run_id: run.id }).catch((error: unknown) => toasts.error(`Could not interrupt ${run.id}: ${errorMessage(error)}`));
  };
  return (
    <div className="drawer" data-testid="run-drawer" data-run-id={run.id}>
      <header className="drawer-header">
        <span className="pane-title">{run.id}</span>
        <span className="pane-agent">{run.backend}</span>
        {run.node !== undefined && (
          <span className="session-meta" data-testid="run-drawer-node">
            on {run.node}
          </span>
        )}
        {run.repo !== undefined && (
          <span className="session-meta" data-testid="run-drawer-repo" title={run.repo.ref !== undefined ? `from ${run.repo.ref}` : undefined}>
            {run.repo.name} · {run.repo.branch}
            {run.repo.push ? ' · push to origin' : ''}
          </span>
        )}
        <span className="session-meta" data-testid="run-drawer-status">
          {run.status}
          {run.reason !== null ? ` (${run.reason})` : ''}
        </span>
        <span className="spacer" />
        {(run.status === 'running' || run.status === 'streaming') && !over && run.keep_alive && run.mode !== 'pty' && (
          <button type="button" className="icon-button" data-testid="run-interrupt" title="Stop this turn; the conversation stays open for the next prompt" onClick={interrupt}>
            stop turn
          </button>
        )}
        {!over && (
          <button type="button" className="icon-button" data-testid="run-cancel" onClick={cancel}>
            cancel
          </button>
        )}
        <button type="button" className="icon-button" data-testid="run-drawer-close" onClick={onClose}>
          close
        </button>
      </header>
      <div className="run-prompt" title={run.cwd}>
        {run.prompt}
      </div>
      {conversation !== undefined && (over || run.status === 'orphaned') && <ResumeRun run={run} nodes={nodes} onResumed={onResumed} />}
      <ol className="run-events" data-testid="run-events">
        {events.map((e) => {
          const line = eventLine(e);
          return (
            <li key={e.seq} className={`run-event run-event-${line.kind}`} data-testid="run-event" data-type={e.type} data-seq={e.seq}>
              <span className="run-event-type">{e.type}</span> <span className="run-event-text">{line.text}</span>
            </li>
          );
        })}
      </ol>
    </div>
  );
}

/** A controller's cluster nodes: each with its labels, backends, free slots and the runs listed here that went to it. */
function NodeList({ nodes, runs }: { nodes: ClusterNode[]; runs: RunView[] }) {
  return (
    <ul className="node-list" data-testid="node-list">
      {nodes.map((n) => {
        const going = runs.filter((r) => r.node === n.name && !ENDED.has(r.status)).length;
        return (
          <li key={n.name} className="node-item" data-testid="node-item" data-node={n.name} title={n.clis.map((c) => `${c.name} ${c.version}`).join('\n')}>
            <span className="session-title">{n.name}</span>
            <span className="session-meta">
              {n.clis.map((c) => c.name).join(', ') || 'no backend'} · {n.slots.free} of {n.slots.total} slots free · {going} going
              {n.labels.length > 0 ? ` · ${n.labels.join(', ')}` : ''}
              {n.repos.length > 0 ? ` · repos ${n.repos.join(', ')}` : ''}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

export function RunList() {
  const runs = useRuns();
  const nodes = useClusterNodes();
  const [openId, setOpenId] = useState<string | null>(null);
  const open = runs.find((r) => r.id === openId);
  return (
    <section className="session-list" data-testid="run-list">
      {nodes.length > 0 && (
        <>
          <h2>Cluster nodes</h2>
          <NodeList nodes={nodes} runs={runs} />
        </>
      )}
      <h2>Agent runs</h2>
      {runs.length === 0 && <div className="muted">None yet.</div>}
      <ul>
        {runs.map((r) => (
          <li key={r.id}>
            <button type="button" className={`session-item ${openId === r.id ? 'active' : ''}`} data-testid="run-item" data-run-id={r.id} data-status={r.status} title={`${r.id}\n${r.cwd}`} onClick={() => setOpenId(r.id)}>
              <span className="session-title">{r.prompt}</span>
              <span className="session-meta">
                {r.backend} · {r.status}
                {r.reason !== null && r.status !== 'completed' ? ` (${r.reason})` : ''}
                {r.node !== undefined ? ` · on ${r.node}` : ''}
              </span>
            </button>
          </li>
        ))}
      </ul>
      {open && <RunDrawer key={open.id} run={open} nodes={nodes} onClose={() => setOpenId(null)} onResumed={setOpenId} />}
    </section>
  );
}
