/**
 * Starting a pane: a shell, or an agent CLI from the daemon's profiles. An agent's pane answers
 * only once the CLI sits at its idle prompt (up to about 90 s), so each start is tracked below the
 * form with its elapsed time and, if it fails, the server's message; the form and everything else
 * stay usable meanwhile, and several starts can run at once.
 */
import { useEffect, useRef, useState, type SubmitEvent } from 'react';
import { errorMessage } from '../rpc/rpc-client.js';
import type { AgentInfo, CreatePaneParams } from '../rpc/wire.js';
import { useClusterNodes } from '../sessions/run-list.js';
import { useDashboard } from '../ui/dashboard-context.js';
import { reloadPanes } from './pane-sync.js';

interface Start {
  id: number;
  label: string;
  startedAt: number;
  error: string | null;
}

function useAgents(): AgentInfo[] {
  const { rpc, toasts } = useDashboard();
  const [agents, setAgents] = useState<AgentInfo[]>([]);
  useEffect(() => {
    const load = (): void => {
      rpc.call('agents', {}).then(
        (result) => {
          setAgents(result.agents);
        },
        (error: unknown) => {
          toasts.error(`Could not list the agents: ${errorMessage(error)}`);
        },
      );
    };
    if (rpc.status.state === 'open') load();
    return rpc.onOpen(load);
  }, [rpc, toasts]);
  return agents;
}

function Elapsed({ since }: { since: number }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => {
      setNow(Date.now());
    }, 1000);
    return () => {
      window.clearInterval(timer);
    };
  }, []);
  return <span className="elapsed">{Math.floor((now - since) / 1000)} s</span>;
}

/** The create_pane parameters the form describes, or why it cannot be sent. */
function paramsOf(form: { kind: 'shell' | 'agent'; agent: string; cwd: string; title: string; command: string; agentHome: string; modelUrl: string; node: string }): CreatePaneParams | string {
  const params: CreatePaneParams = {};
  // A program on a node of this controller (an agent there starts as a run).
  if (form.kind === 'shell' && form.node) params.node = form.node;
  const cwd = form.cwd.trim();
  const title = form.title.trim();
  if (cwd) params.cwd = cwd;
  if (title) params.title = title;
  if (form.kind === 'shell') {
    const command = form.command.trim();
    if (command) params.command = command;
    return params;
  }
  if (!form.agent) return 'Choose an agent.';
  if (!cwd) return 'An agent needs a working directory (cwd).';
  params.agent = form.agent;
  const agentHome = form.agentHome.trim();
  const modelUrl = form.modelUrl.trim();
  if ((agentHome === '') !== (modelUrl === '')) return 'agent_home and model_url go together: give both or neither.';
  if (agentHome) {
    params.agent_home = agentHome;
    params.model_url = modelUrl;
  }
  return params;
}

export function NewPaneForm() {
  const { rpc, panes, toasts } = useDashboard();
  const agents = useAgents();
  const [kind, setKind] = useState<'shell' | 'agent'>('shell');
  const [agent, setAgent] = useState('');
  const [cwd, setCwd] = useState('');
  const [title, setTitle] = useState('');
  const [command, setCommand] = useState('');
  const [agentHome, setAgentHome] = useState('');
  const [modelUrl, setModelUrl] = useState('');
  // '' is this machine; a node's name, that node (a shell only).
  const [node, setNode] = useState('');
  const nodes = useClusterNodes();
  // Kept as chosen while its node is away (its lease lapsed, it restarts): sent there all the same
  // (the controller answers that it cannot reach it), never silently run on this machine instead.
  const chosenNode = kind === 'shell' ? node : '';
  const away = node !== '' && !nodes.some((n) => n.name === node);
  const [invalid, setInvalid] = useState<string | null>(null);
  const [starts, setStarts] = useState<Start[]>([]);
  const nextId = useRef(1);

  // The first installed agent is the likeliest choice; keep the user's pick once made.
  const chosenAgent = agent || (agents.find((a) => a.binary !== null) ?? agents[0])?.name || '';

  const create = async (params: CreatePaneParams, start: Start): Promise<void> => {
    try {
      const result = await rpc.call('create_pane', params);
      setStarts((list) => list.filter((s) => s.id !== start.id));
      const ready = result.agent ? ` (ready in ${(result.agent.ready_ms / 1000).toFixed(1)} s)` : '';
      toasts.info(`Started ${result.title || result.pane_id}${ready}`);
      await reloadPanes(rpc, panes);
    } catch (error) {
      const message = errorMessage(error);
      setStarts((list) => list.map((s) => (s.id === start.id ? { ...s, error: message } : s)));
      toasts.error(`Could not start ${start.label}: ${message}`);
    }
  };

  const submit = (event: SubmitEvent): void => {
    event.preventDefault();
    const params = paramsOf({ kind, agent: chosenAgent, cwd, title, command, agentHome, modelUrl, node: chosenNode });
    if (typeof params === 'string') {
      setInvalid(params);
      return;
    }
    setInvalid(null);
    const label = params.agent ? `${params.agent}${params.cwd ? ` in ${params.cwd}` : ''}` : `${params.command ?? 'shell'}${params.node ? ` on ${params.node}` : ''}`;
    const start: Start = { id: nextId.current++, label: params.title ?? label, startedAt: Date.now(), error: null };
    setStarts((list) => [...list, start]);
    void create(params, start);
  };

  return (
    <div className="new-pane-wrap">
      <form className="new-pane" data-testid="new-pane" onSubmit={submit}>
        <h2>New pane</h2>
        <div className="segmented" role="radiogroup" aria-label="Kind">
          {(['shell', 'agent'] as const).map((k) => (
            <label key={k} className={kind === k ? 'active' : ''}>
              {/* The radio covers its label, invisibly: a click anywhere on the segment is a click on it. */}
              <input type="radio" name="new-pane-kind" value={k} data-testid={`new-pane-kind-${k}`} checked={kind === k} onChange={() => setKind(k)} />
              {k}
            </label>
          ))}
        </div>
        {kind === 'agent' && (
          <label className="field">
            <span>agent</span>
            <select data-testid="new-pane-agent" value={chosenAgent} onChange={(e) => setAgent(e.target.value)}>
              {agents.length === 0 && <option value="">(loading…)</option>}
              {agents.map((a) => (
                <option key={a.name} value={a.name}>
                  {a.display_name}
                  {a.binary === null ? ' (not installed)' : ''}
                </option>
              ))}
            </select>
          </label>
        )}
        {kind === 'shell' && (
          <label className="field">
            <span>command</span>
            <input data-testid="new-pane-command" placeholder="default shell" value={command} onChange={(e) => setCommand(e.target.value)} />
          </label>
        )}
        {kind === 'shell' && (nodes.length > 0 || node !== '') && (
          <label className="field">
            <span>where</span>
            <select data-testid="new-pane-node" value={chosenNode} onChange={(e) => setNode(e.target.value)} title="A node opens panes only when started with switchboard node --panes">
              <option value="">this machine</option>
              {nodes.map((n) => (
                <option key={n.name} value={n.name}>
                  node {n.name}
                </option>
              ))}
              {away && <option value={node}>node {node} (not connected)</option>}
            </select>
          </label>
        )}
        <label className="field">
          <span>cwd</span>
          <input data-testid="new-pane-cwd" placeholder={kind === 'agent' ? '/path/to/project (required)' : chosenNode ? 'the node’s sandbox root' : 'daemon’s folder'} value={cwd} onChange={(e) => setCwd(e.target.value)} />
        </label>
        <label className="field">
          <span>title</span>
          <input data-testid="new-pane-title" placeholder="optional" value={title} onChange={(e) => setTitle(e.target.value)} />
        </label>
        {kind === 'agent' && (
          <details className="advanced" data-testid="new-pane-advanced">
            <summary>advanced: offline model</summary>
            <label className="field">
              <span>agent_home</span>
              <input data-testid="new-pane-agent-home" placeholder="/tmp/isolated-home" value={agentHome} onChange={(e) => setAgentHome(e.target.value)} />
            </label>
            <label className="field">
              <span>model_url</span>
              <input data-testid="new-pane-model-url" placeholder="http://127.0.0.1:port" value={modelUrl} onChange={(e) => setModelUrl(e.target.value)} />
            </label>
          </details>
        )}
        {invalid && (
          <div className="form-error" data-testid="new-pane-invalid">
            {invalid}
          </div>
        )}
        <button type="submit" className="button button-primary" data-testid="new-pane-submit">
          Start {kind}
        </button>
      </form>
      {starts.length > 0 && (
        <ul className="starts">
          {starts.map((s) => (
            <li key={s.id} className={`start ${s.error ? 'start-failed' : ''}`} data-testid="pending-create" data-status={s.error ? 'failed' : 'starting'}>
              <div className="start-head">
                <span className="start-label">{s.label}</span>
                {s.error ? (
                  <button type="button" className="link-button" data-testid="pending-create-dismiss" onClick={() => setStarts((list) => list.filter((x) => x.id !== s.id))}>
                    dismiss
                  </button>
                ) : (
                  <>
                    <span className="spinner" aria-hidden="true" />
                    <Elapsed since={s.startedAt} />
                  </>
                )}
              </div>
              {s.error && (
                <div className="start-error" data-testid="pending-create-error">
                  {s.error}
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
