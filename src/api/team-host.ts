/**
 * How a team run opens and closes its agents in the daemon: each one an agent pane like any other
 * (`create_pane` with an agent), so the dashboard, the logs, asks and approvals see the team's
 * agents as they see every agent, and a person can take one over by typing into its pane.
 */
import path from 'node:path';
import { isMcpConfigAgent, startAgent, TEAM_ROLE_ENV, type AgentPane } from '../agents/index.js';
import { createTranscriptReader, markQuestion, newAskId } from '../asks/index.js';
import { SwitchboardError } from '../core/errors.js';
import type { TeamHost } from '../orchestration/index.js';
import { scopesForNewPane, type Grant } from './authorize.js';
import type { Services } from './services.js';

/** Grace for an agent's CLI to exit when a run closes its panes. */
const CLOSE_GRACE_MS = 2_000;

export interface TeamHostOptions {
  /** Who started the run: its agents' tokens never carry more than this caller holds. */
  grant: Grant;
  /** Each agent from its own isolated HOME under `homeRoot`, against `modelUrl` (tests, demos). */
  sandbox?: { homeRoot: string; modelUrl: string };
  /** Variables every agent of the run gets. */
  env?: Record<string, string>;
  /** The planner calls the team's tools by marker lines only, even where its CLI could over MCP. */
  markersOnly?: boolean;
}

/** A team run's host over the daemon's services: its agents are daemon panes, with `options`' token scopes, HOMEs and variables. */
export function teamHostOf(services: Services, options: TeamHostOptions): TeamHost {
  return {
    async startAgent(spec, signal): Promise<AgentPane> {
      const profile = services.agents.get(spec.agent);
      // One HOME an agent: runs that share the root never share an agent's HOME.
      const sandbox = options.sandbox ? { home: path.join(options.sandbox.homeRoot, spec.runId, homeFolderOf(spec.title)), modelUrl: options.sandbox.modelUrl, ...(services.daemon.mcpServer ? { mcp: services.daemon.mcpServer } : {}) } : undefined;
      const started = await startAgent(services.panes, profile, {
        cwd: spec.folder,
        title: spec.title,
        // Tells Switchboard's MCP server in the agent which team tools to list; what a call may do
        // is decided by the daemon from the pane the call's token belongs to, never from this.
        env: { ...options.env, [TEAM_ROLE_ENV]: spec.member.kind },
        signal,
        scopes: scopesForNewPane(options.grant, true),
        tempRoot: services.agents.tempRoot,
        ...(sandbox ? { sandbox } : {}),
      });
      const agent = services.agentPanes.get(started.pane.id);
      if (!agent) throw new SwitchboardError('INTERNAL_ERROR', `pane ${started.pane.id} started ${spec.agent} but is not tracked as an agent`);
      return agent;
    },
    callsVia(agent) {
      // Switchboard's MCP server is in the configuration of an agent it starts from an isolated
      // HOME; a user's own CLI may not have it, and marker lines work with any program.
      return !options.markersOnly && options.sandbox && services.daemon.mcpServer && isMcpConfigAgent(agent) ? 'mcp' : 'markers';
    },
    async closeAgent(agent): Promise<void> {
      await services.panes.remove(agent.pane.id, { graceMs: CLOSE_GRACE_MS }).catch(() => undefined);
    },
    transcriptTurn(agent, text) {
      // The ask engine's way: the text carries a request id on a line of its own, and the reply
      // that follows the prompt recording it is read from the CLI's transcript. (async: a reader
      // that throws as it reads a file rejects, never throws at the caller.)
      const location = services.asks.directory.get(agent.pane.id)?.transcript();
      if (!location) return undefined;
      const id = newAskId();
      const reader = createTranscriptReader(location, id);
      reader.begin();
      return { text: markQuestion(text, id), reader: { read: async (context) => reader.read(context) } };
    },
  };
}

/** A folder name from a pane title ("executor-1 (codex)" → "executor-1-codex"). */
function homeFolderOf(title: string): string {
  return title.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'agent';
}
