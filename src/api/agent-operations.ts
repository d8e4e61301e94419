/** The agent methods: the profiles the daemon knows (`agents`), and every agent pane's state now (`pane_states`). */
import { defaultBinaryDirs, findAgentBinary } from '../agents/index.js';
import type { Handler } from './handler.js';
import { agentInfo, approvalInfo } from './to-wire.js';

export const agentHandlers: { agents: Handler<'agents'>; pane_states: Handler<'pane_states'> } = {
  agents(ctx) {
    // Found with the environment a pane gets, as create_pane will find them.
    const env = ctx.panes.environmentFor(undefined);
    return {
      agents: ctx.agents.list().map((profile) => agentInfo(profile, profile.resolveBinary?.(env) ?? findAgentBinary(profile.data, env, defaultBinaryDirs(env)))),
      problems: ctx.agents.problems,
    };
  },

  async pane_states(ctx) {
    const own = ctx.panes.list().flatMap((pane) => {
      const log = ctx.logs.paneLog(pane.id);
      const tracker = log?.tracker;
      if (!log || !tracker) return [];
      return [{ pane_id: pane.id, state: tracker.state.state, approval: approvalInfo(log.approval, log.approvalId) }];
    });
    // A controller's nodes' agent panes too, as `list` gives their panes.
    const remote = ctx.nodePanes.remote;
    return { states: remote ? [...own, ...(await remote.states(ctx.signal))] : own };
  },
};
