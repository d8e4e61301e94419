/**
 * Real agent CLIs in panes of an in-process registry, each from an isolated HOME against the
 * scripted model: what the ask tests and the transcript recorder start their targets with.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { AgentCatalog, AgentPane, startAgent, type AgentProfile, type AgentState, type AgentStateTracker } from '../../src/agents/index.js';
import type { Pane, PaneRegistry } from '../../src/pane/index.js';
import { AGENT_BIN_DIRS, useAgentBinaries } from '../e2e/agent-flow.js';

export interface AgentInPane {
  /** The agent in its pane, as the daemon keeps one per agent pane (its tracker is `tracker`). */
  agent: AgentPane;
  pane: Pane;
  profile: AgentProfile;
  version: string | undefined;
  tracker: AgentStateTracker;
  home: string;
  cwd: string;
}

/** Starts `agent` in `registry` from `home` (created) in `cwd` against the model at `modelUrl`; resolves at its idle prompt. */
export async function startSandboxedAgent(registry: PaneRegistry, agent: string, options: { home: string; cwd: string; modelUrl: string; title?: string }): Promise<AgentInPane> {
  useAgentBinaries();
  mkdirSync(options.home, { recursive: true });
  mkdirSync(options.cwd, { recursive: true });
  const profile = new AgentCatalog().get(agent);
  const started = await startAgent(registry, profile, {
    cwd: options.cwd,
    title: options.title ?? agent,
    sandbox: { home: options.home, modelUrl: options.modelUrl },
    binaryDirs: AGENT_BIN_DIRS,
    cols: 120,
    rows: 40,
    readyTimeoutMs: 120_000,
  });
  const agentPane = new AgentPane(started.pane, profile);
  started.pane.onExit(() => agentPane.dispose());
  return { agent: agentPane, pane: started.pane, profile, version: started.version, tracker: agentPane.tracker, home: path.resolve(options.home), cwd: path.resolve(options.cwd) };
}

/** Resolves once the tracker reports `state` (at once if it already does); rejects after `timeoutMs` with the screen. */
export function untilState(agent: AgentInPane, states: readonly AgentState[], timeoutMs = 60_000): Promise<AgentState> {
  if (states.includes(agent.tracker.state.state)) return Promise.resolve(agent.tracker.state.state);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`never ${states.join('|')} (now ${agent.tracker.state.state}); screen:\n${agent.pane.screenLines().filter((l) => l.trim()).join('\n')}`));
    }, timeoutMs);
    const sub = agent.tracker.onChange((change) => {
      if (!states.includes(change.state)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(change.state);
    });
  });
}
