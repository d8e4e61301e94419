/**
 * Seed 002's `agent_execute` as a face of the run service: a task run to its end by
 * CodingAgent.execute() in a pane of the daemon's registry (`PaneBackend` with the call's `task`),
 * recorded in the ledger as a run (its states, each approval and who decided it, the reply, the
 * files changed), under the policy's limits and concurrency, and cancelled the one way. The call's
 * own approval policy decides on the screen, then a person where the call waits for one
 * (CallerGovernance records that the policy file does not judge them).
 */
import type { AgentCatalog, AgentPanes } from '../agents/index.js';
import type { ApprovalPolicy } from '../approvals/policy/index.js';
import type { ExecuteResult } from '../drivers/pane/index.js';
import { CallerGovernance } from '../governance/caller-governance.js';
import type { RunState } from '../ledger/run-model.js';
import type { PaneRegistry } from '../pane/index.js';
import { PaneBackend } from './backends/pane-backend.js';
import type { RunService } from './run-service.js';

export interface TaskOptions {
  service: RunService;
  agent: string;
  task: string;
  cwd: string;
  catalog: AgentCatalog;
  registry: PaneRegistry;
  agentPanes: AgentPanes;
  policy: ApprovalPolicy;
  waitForPerson: boolean;
  keepPane: boolean;
  /** Scopes of the token the pane's programs get (default: the registry's own rule). */
  scopes?: readonly string[] | undefined;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  args?: string[];
  sandbox?: { home: string; modelUrl: string };
  /** Who asks ('owner', or the pane whose token does): only they or the owner may cancel the run. */
  createdBy: string;
  /** Aborted when the caller goes away: the task is cancelled (and its pane ended). */
  signal: AbortSignal;
}

export interface TaskOutcome {
  runId: string;
  /** How the run ended. */
  state: RunState;
  /** What CodingAgent gave, and the pane it ran in; undefined when the run ended before the agent ran. */
  result: ExecuteResult | undefined;
  paneId: string | null;
}

/** Runs a task to its end as a run of `options.service`. */
export async function executeTask(options: TaskOptions): Promise<TaskOutcome> {
  let task: { result: ExecuteResult; paneId: string | null } | undefined;
  let ended: (state: RunState) => void = () => undefined;
  const end = new Promise<RunState>((resolve) => (ended = resolve));
  const driver = new PaneBackend({
    tool: options.agent,
    catalog: options.catalog,
    registry: options.registry,
    agentPanes: options.agentPanes,
    ...(options.args ? { args: options.args } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    task: {
      policy: options.policy,
      waitForPerson: options.waitForPerson,
      keepPane: options.keepPane,
      ...(options.scopes ? { scopes: options.scopes } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
      onResult: (result, paneId) => (task = { result, paneId }),
    },
  });
  const run = await options.service.submit(
    {
      backend: options.agent,
      prompt: options.task,
      cwd: options.cwd,
      keep_alive: false,
      caller: options.createdBy,
      // The call's own bounds, as the run's limits: the tighter of them and the policy's hold, and are recorded.
      limits: { ...(options.timeoutMs !== undefined ? { wall_clock_ms: options.timeoutMs } : {}), ...(options.idleTimeoutMs !== undefined ? { no_output_ms: options.idleTimeoutMs } : {}) },
    },
    { name: 'agent_execute', driver, governance: new CallerGovernance({ face: 'agent_execute', reason: "agent_execute: the call's own policy decides the task's approvals, then a person where the call waits for one; the policy file's approvals do not judge them" }), ended },
  );
  const cancel = (): void => void options.service.cancel(run.id).catch(() => undefined);
  options.signal.addEventListener('abort', cancel, { once: true });
  // A caller gone while the run was being made is gone too.
  if (options.signal.aborted) cancel();
  try {
    const state = await end;
    return { runId: run.id, state, result: task?.result, paneId: task?.paneId ?? null };
  } finally {
    options.signal.removeEventListener('abort', cancel);
  }
}
