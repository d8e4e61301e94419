/**
 * Tasks run to their end inside the daemon (`agent_execute`): CodingAgent.execute() in a pane of
 * the daemon's registry, with the daemon's agent panes, so the pane is in `list`, on the dashboard
 * (`pane_states`, `state` notifications) and answerable through `answer_approval` while the task
 * runs. The domain-to-wire mapping of the task's result is here too.
 */
import { checkSandbox } from '../agents/index.js';
import { ASK_POLICY, AUTO_APPROVE_POLICY, parsePolicy, type ApprovalPolicy } from '../approvals/index.js';
import { CodingAgent, type ApprovalRecord, type ExecuteResult } from '../drivers/pane/index.js';
import type { ExecuteApprovalInfo, ExecuteResultInfo, Params } from '../protocol/methods.js';
import { OWNER_GRANT, scopesForNewPane } from './authorize.js';
import type { Handler } from './handler.js';

export const executeHandlers: { agent_execute: Handler<'agent_execute'> } = {
  async agent_execute(ctx, p) {
    ctx.agents.get(p.agent);
    const cwd = ctx.panes.resolveCwd(p.cwd);
    const sandbox = p.agent_home !== undefined && p.model_url !== undefined ? checkSandbox({ home: p.agent_home, modelUrl: p.model_url }) : undefined;
    const agent = new CodingAgent({
      tool: p.agent,
      catalog: ctx.agents,
      registry: ctx.panes,
      agentPanes: ctx.agentPanes,
      autoApprove: policyOf(p.policy),
      waitForPerson: p.wait_for_approval ?? false,
      // The pane's programs get an agent pane's token, never more than the caller has.
      scopes: scopesForNewPane(ctx.grant ?? OWNER_GRANT, true),
      ...(p.timeout_ms !== undefined ? { timeoutMs: p.timeout_ms } : {}),
      ...(p.idle_timeout_ms !== undefined ? { idleTimeoutMs: p.idle_timeout_ms } : {}),
      ...(p.args ? { args: p.args } : {}),
      ...(sandbox ? { sandbox } : {}),
    });
    let paneId: string | null = null;
    agent.onProgress((event) => {
      if (event.type === 'started') paneId = event.paneId;
    });
    try {
      // The caller going away cancels the task (and ends its pane).
      const result = await agent.execute(p.task, { workdir: cwd, signal: ctx.signal });
      return executeResultInfo(result, paneId);
    } finally {
      if (p.keep_pane === true && agent.pane?.alive) agent.detach();
      else await agent.dispose();
    }
  },
};

/** The policy a call names: auto, ask (the default), or its own rules, checked like a policy file. */
function policyOf(policy: Params<'agent_execute'>['policy']): ApprovalPolicy {
  if (policy === undefined || policy === 'ask') return ASK_POLICY;
  if (policy === 'auto') return AUTO_APPROVE_POLICY;
  return parsePolicy(policy);
}

function approvalInfo(record: ApprovalRecord): ExecuteApprovalInfo {
  const r = record.request;
  return {
    at: record.at,
    id: record.id,
    request: r ? { tool: r.tool, tool_name: r.toolName, command: r.command, path: r.path, certain: r.certain, doubts: r.doubts, options: r.options.map((o) => ({ label: o.label, meaning: o.meaning })) } : null,
    decision: record.decision,
    reason: record.reason,
    decided_by: record.decidedBy,
    answered: record.answered,
    presses: record.presses,
  };
}

/** A task's result as the wire carries it. */
function executeResultInfo(result: ExecuteResult, paneId: string | null): ExecuteResultInfo {
  return {
    status: result.status,
    pane_id: paneId,
    files_changed: result.filesChanged,
    file_changes: result.fileChanges.map((c) => ({ path: c.path, change: c.change })),
    output_log: result.outputLog,
    final_message: result.finalMessage,
    duration_ms: result.durationMs,
    approvals: result.approvals.map(approvalInfo),
    error_message: result.errorMessage,
    error_code: result.errorCode,
    question: result.question,
    states: result.states.map((s) => ({ state: s.state, previous: s.previous, at: s.at, evidence: s.evidence ? { rule: s.evidence.rule, pattern: s.evidence.pattern, line: s.evidence.line, row: s.evidence.row } : null })),
    completed_by: result.completedBy,
  };
}
