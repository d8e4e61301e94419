/**
 * Conversations: multi-turn sessions on an agent's structured mode (`agent_session_*`, their wire
 * names), one conversation across prompts, its entries the session's log. Each prompt is a run of
 * the run service (its id is the turn's `run_id`).
 */
import { checkSandbox } from '../agents/index.js';
import { ASK_POLICY, AUTO_APPROVE_POLICY } from '../approvals/policy/index.js';
import { callerOf, requireMaker, runServiceOf } from './bridge-operations.js';
import type { Handler } from './handler.js';
import { turnResult } from './to-wire.js';

type ConversationMethods = 'agent_session_open' | 'agent_session_prompt' | 'agent_session_cancel' | 'agent_session_close';

export const conversationHandlers: { [M in ConversationMethods]: Handler<M> } = {
  agent_session_open(ctx, p) {
    const cwd = ctx.panes.resolveCwd(p.cwd);
    const sandbox = p.agent_home !== undefined && p.model_url !== undefined ? checkSandbox({ home: p.agent_home, modelUrl: p.model_url }) : undefined;
    const approvals = p.policy === 'auto' ? AUTO_APPROVE_POLICY : ASK_POLICY;
    const id = ctx.structuredRuns.openAgentSession({ service: runServiceOf(ctx), agent: p.agent, cwd, sandbox, args: p.args, approvals, createdBy: callerOf(ctx.grant) });
    // A session belongs to the connection that opened it: a client that goes away leaves no agent running.
    ctx.signal.addEventListener('abort', () => void ctx.structuredRuns.closeAgentSession(id).catch(() => undefined), { once: true });
    return { session_id: id };
  },

  async agent_session_prompt(ctx, p) {
    // Prompting drives the agent: only the session's maker, or the owner.
    requireMaker(ctx.grant, ctx.structuredRuns.creatorOf(p.session_id), `session ${p.session_id}`);
    return turnResult(await ctx.structuredRuns.promptAgentSession(p.session_id, p.prompt, ctx.signal));
  },

  async agent_session_cancel(ctx, p) {
    requireMaker(ctx.grant, ctx.structuredRuns.creatorOf(p.session_id), `session ${p.session_id}`);
    await ctx.structuredRuns.cancelAgentSessionTurn(p.session_id);
    return { success: true };
  },

  async agent_session_close(ctx, p) {
    requireMaker(ctx.grant, ctx.structuredRuns.creatorOf(p.session_id), `session ${p.session_id}`);
    await ctx.structuredRuns.closeAgentSession(p.session_id);
    return { success: true };
  },
};
