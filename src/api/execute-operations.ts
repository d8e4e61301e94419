/**
 * Tasks run to their end inside the daemon (`agent_execute`), a face of the run service: the task
 * is a run in the ledger (its states, the approvals and who decided them, the reply, the files
 * changed), under the policy's limits and concurrency, cancelled the one way; its driver is
 * CodingAgent.execute() in a pane of the daemon's registry with the daemon's agent panes
 * (`PaneBackend` with the call's `task`), so the pane is in `list`, on the dashboard (`pane_states`,
 * `state` notifications) and answerable through `answer_approval` while the task runs. The call's
 * own policy decides its approvals, as seed 002's execute() does. The domain-to-wire mapping of the
 * task's result is here too.
 */
import { checkSandbox } from '../agents/index.js';
import type { ErrorCode } from '../core/errors.js';
import { ASK_POLICY, AUTO_APPROVE_POLICY, parsePolicy, type ApprovalPolicy } from '../approvals/index.js';
import type { ApprovalRecord, ExecuteResult } from '../drivers/pane/index.js';
import { executeTask, type RunState } from '../runs/index.js';
import { callerOf, runServiceOf } from './bridge-operations.js';
import type { ExecuteApprovalInfo, ExecuteResultInfo, Params } from '../protocol/methods.js';
import { OWNER_GRANT, scopesForNewPane } from './authorize.js';
import type { Handler } from './handler.js';

export const executeHandlers: { agent_execute: Handler<'agent_execute'> } = {
  async agent_execute(ctx, p) {
    ctx.agents.get(p.agent);
    const service = runServiceOf(ctx);
    const sandbox = p.agent_home !== undefined && p.model_url !== undefined ? checkSandbox({ home: p.agent_home, modelUrl: p.model_url }) : undefined;
    const outcome = await executeTask({
      service,
      agent: p.agent,
      task: p.task,
      cwd: ctx.panes.resolveCwd(p.cwd),
      catalog: ctx.agents,
      registry: ctx.panes,
      agentPanes: ctx.agentPanes,
      policy: policyOf(p.policy),
      waitForPerson: p.wait_for_approval ?? false,
      keepPane: p.keep_pane === true,
      // The pane's programs get an agent pane's token, never more than the caller has.
      scopes: scopesForNewPane(ctx.grant ?? OWNER_GRANT, true),
      ...(p.timeout_ms !== undefined ? { timeoutMs: p.timeout_ms } : {}),
      ...(p.idle_timeout_ms !== undefined ? { idleTimeoutMs: p.idle_timeout_ms } : {}),
      ...(p.args ? { args: p.args } : {}),
      ...(sandbox ? { sandbox } : {}),
      createdBy: callerOf(ctx.grant),
      signal: ctx.signal,
    });
    return executeResultInfo(outcome.result ?? taskNeverRan(outcome.state), outcome.paneId, outcome.runId, outcome.state);
  },
};

/** The result of a task whose agent never ran: the run ended first (cancelled while queued, refused at start). */
function taskNeverRan(state: RunState): ExecuteResult {
  const message = 'message' in state ? state.message : 'the run ended before the task started';
  return { status: state.status === 'cancelled' ? 'cancelled' : 'error', filesChanged: [], fileChanges: [], outputLog: '', finalMessage: null, durationMs: 0, approvals: [], errorMessage: message, errorCode: state.status === 'cancelled' ? null : 'AGENT_ERROR', question: null, states: [], completedBy: [] };
}

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

/**
 * How the run service ended a task itself, whatever the pane saw of it (a cancel there): past a
 * limit of the policy's or the call's (a timeout, or an error past its output limit), or refused at
 * start; undefined when the task ended on its own.
 */
function endedByService(state: RunState): { status: 'timeout' | 'error'; code: ErrorCode; message: string } | undefined {
  if (state.status !== 'failed') return undefined;
  switch (state.reason) {
    case 'timeout':
    case 'no_output_timeout':
      return { status: 'timeout', code: 'TIMEOUT', message: state.message };
    case 'output_limit':
      return { status: 'error', code: 'LIMIT_EXCEEDED', message: state.message };
    case 'policy':
      return { status: 'error', code: 'FORBIDDEN', message: state.message };
    default:
      return undefined;
  }
}

/** A task's result as the wire carries it, with its run, and the run service's reason where it ended the task. */
function executeResultInfo(result: ExecuteResult, paneId: string | null, runId: string, state: RunState): ExecuteResultInfo {
  const ended = endedByService(state);
  return {
    run_id: runId,
    status: ended?.status ?? result.status,
    pane_id: paneId,
    files_changed: result.filesChanged,
    file_changes: result.fileChanges.map((c) => ({ path: c.path, change: c.change })),
    output_log: result.outputLog,
    final_message: result.finalMessage,
    duration_ms: result.durationMs,
    approvals: result.approvals.map(approvalInfo),
    error_message: ended?.message ?? result.errorMessage,
    error_code: ended?.code ?? result.errorCode,
    question: result.question,
    states: result.states.map((s) => ({ state: s.state, previous: s.previous, at: s.at, evidence: s.evidence ? { rule: s.evidence.rule, pattern: s.evidence.pattern, line: s.evidence.line, row: s.evidence.row } : null })),
    completed_by: result.completedBy,
  };
}
