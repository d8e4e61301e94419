/**
 * The planner's tools (seed 003 FR-004 and issue 24 items 3, 6 and 10): `tabs.list`,
 * `tabs.create`, `tabs.send`, `tabs.read`, `tabs.wait`, `run.report_draft`, `run.complete`, and
 * the shared task list's `tasks.list`, `tasks.add`, `tasks.claim`, `tasks.complete`. One table
 * serves both ways in, MCP (`tabs_list`, as CLIs take tool names) and marker lines, so both give
 * the same results. A call never throws: it answers `{ok: true, result}` or `{ok: false, error}`
 * with a stable code, so the planner always hears back. Workers may use the task tools only, and
 * only for themselves.
 */
import { z } from 'zod';
import { isSwitchboardError, SwitchboardError } from '../../core/errors.js';
import { describeIssues } from '../../core/zod-issues.js';
import { decideApproval, type ApprovalRequest, type PolicyVerdict } from '../../approvals/index.js';
import { judgeRisk, type RiskContext, type RiskJudgement } from '../risk.js';
import type { TaskList } from '../task-list.js';
import { WAIT_UNTIL, type GateAnswer, type TeamPort } from './team-port.js';

/** Who calls: the planner, or one of the workers (its own token, its own tasks). */
export type ToolCaller = { kind: 'planner' } | { kind: 'worker'; workerId: string };

/** A tool's outcome, as the planner gets it (marker lines carry it as is). */
export type ToolOutcome = { ok: true; result: unknown } | { ok: false; error: { code: string; message: string } };

/** What the tools work with for one team run. */
export interface ToolDeps {
  port: TeamPort;
  tasks: TaskList;
  /** How text for a worker is judged: its approval policy and folder. */
  riskContext(workerId: string): RiskContext;
  /** The preset's choice for medium risk. */
  medium: 'confirm' | 'pass';
  /**
   * Text typed into each worker without Enter, by worker: judged together with what is sent to it
   * next, so a command cut in two sends is judged whole.
   */
  unsent: Map<string, string>;
  signal: AbortSignal;
}

const DEFAULT_READ_LINES = 40;
const MAX_READ_LINES = 500;
const DEFAULT_WAIT_MS = 10 * 60_000;
const MAX_WAIT_MS = 60 * 60_000;
const MAX_SEND_CHARS = 200_000;
const MAX_DRAFT_CHARS = 200_000;

const tabId = z.string().min(1).max(64);
const taskId = z.string().min(1).max(64);

interface ToolSpec<S extends z.ZodType> {
  description: string;
  params: S;
  /** Workers may call it (for themselves); otherwise the planner only. */
  workers: boolean;
  run(params: z.output<S>, caller: ToolCaller, deps: ToolDeps): unknown;
}

const tool = <S extends z.ZodType>(spec: ToolSpec<S>): ToolSpec<S> => spec;

/** Every tool by its seed name. */
export const TEAM_TOOLS = {
  'tabs.list': tool({
    description: "The run's workers: id, role, agent, state, folder and last lines.",
    params: z.strictObject({}),
    workers: false,
    run: (_p, _c, { port }) => ({ tabs: port.workers() }),
  }),
  'tabs.create': tool({
    description: 'Opens a worker of a role of the team, in workingDir or the role’s folder; templateId may name another of the agents the team has.',
    params: z.strictObject({ role: z.string().min(1).max(64), templateId: z.string().min(1).max(64).optional(), workingDir: z.string().min(1).max(4_096).optional() }),
    workers: false,
    run: async (p, _c, { port, signal }) => ({ tab: await port.createWorker(p.role, { ...(p.templateId ? { agent: p.templateId } : {}), ...(p.workingDir ? { folder: p.workingDir } : {}) }, signal) }),
  }),
  'tabs.send': tool({
    description: 'Gives a worker text as a prompt (enter: true, the default) or types it bare. Text with a destructive command waits for a person first.',
    params: z.strictObject({ tabId, text: z.string().min(1).max(MAX_SEND_CHARS), enter: z.boolean().default(true) }),
    workers: false,
    run: async (p, _c, deps) => {
      const whole = (deps.unsent.get(p.tabId) ?? '') + p.text;
      const judgement = await gate(p.tabId, whole, deps);
      await deps.port.send(p.tabId, p.text, { enter: p.enter }, deps.signal);
      if (p.enter) deps.unsent.delete(p.tabId);
      else deps.unsent.set(p.tabId, whole.slice(-MAX_SEND_CHARS));
      return { sent: true, risk: judgement.level };
    },
  }),
  'tabs.read': tool({
    description: "A worker's last lines of output (marker lines taken out).",
    params: z.strictObject({ tabId, lines: z.number().int().min(1).max(MAX_READ_LINES).default(DEFAULT_READ_LINES) }),
    workers: false,
    run: (p, _c, { port }) => ({ tabId: p.tabId, lines: port.read(p.tabId, p.lines) }),
  }),
  'tabs.wait': tool({
    description: 'Waits until a worker is idle, completed, stuck or needs input (or the ones named in until), at most timeoutMs.',
    params: z.strictObject({ tabId, until: z.array(z.enum(WAIT_UNTIL)).min(1).default([...WAIT_UNTIL]), timeoutMs: z.number().int().min(1_000).max(MAX_WAIT_MS).default(DEFAULT_WAIT_MS) }),
    workers: false,
    run: async (p, _c, { port, signal }) => {
      const { worker, reached } = await port.wait(p.tabId, p.until, p.timeoutMs, signal);
      return { tab: worker, reached };
    },
  }),
  'run.report_draft': tool({
    description: "Writes the run's report draft (mode replace, the default) or adds to it (append). Markdown.",
    params: z.strictObject({ text: z.string().max(MAX_DRAFT_CHARS), mode: z.enum(['replace', 'append']).default('replace') }),
    workers: false,
    run: (p, _c, { port }) => port.draft(p.text, p.mode),
  }),
  'run.complete': tool({
    description: 'Ends the run: the goal is met (or cannot be), with a summary for the report.',
    params: z.strictObject({ summary: z.string().min(1).max(MAX_DRAFT_CHARS) }),
    workers: false,
    run: (p, _c, { port }) => {
      port.complete(p.summary);
      return { completed: true };
    },
  }),
  'tasks.list': tool({
    description: 'The shared task list: each task with its owner, state and what it depends on; ready: the ones that can be claimed now.',
    params: z.strictObject({}),
    workers: true,
    run: (_p, _c, { tasks }) => ({ tasks: tasks.list(), ready: tasks.ready().map((t) => t.id) }),
  }),
  'tasks.add': tool({
    description: 'Adds a task to the shared list, optionally waiting for other tasks (dependsOn).',
    params: z.strictObject({ title: z.string().min(1).max(2_000), dependsOn: z.array(taskId).max(50).default([]) }),
    workers: false,
    run: (p, _c, { tasks }) => ({ task: tasks.add(p.title, p.dependsOn) }),
  }),
  'tasks.claim': tool({
    description: 'Takes a task (a worker for itself; the planner for the worker named in tabId). It must be open with every dependency done.',
    params: z.strictObject({ taskId, tabId: tabId.optional() }),
    workers: true,
    run: (p, caller, { tasks, port }) => ({ task: tasks.claim(p.taskId, ownerFor(caller, p.tabId, port)) }),
  }),
  'tasks.complete': tool({
    description: "Marks a task done (its owner, or the planner). Where the owner's role has a check, it runs first: a failing one leaves the task open and answers with its output.",
    params: z.strictObject({ taskId }),
    workers: true,
    run: async (p, caller, { tasks, port, signal }) => {
      const asPlanner = caller.kind === 'planner';
      const by = asPlanner ? 'planner' : caller.workerId;
      const task = tasks.completable(p.taskId, by, asPlanner);
      if (task.state === 'done') return { task };
      // The owner's check, whoever says it is done (a task with no owner has no worker's check).
      // A worker that asked hears the result here; one the planner spoke for is told in its terminal.
      const check = task.owner !== null ? await port.check(task.owner, task.id, { tell: task.owner !== by }, signal) : undefined;
      if (check && !check.passed) return { task: tasks.checkFailed(task.id, check.output), check: { command: check.command, passed: false, exitCode: check.exitCode, output: check.output } };
      return { task: tasks.complete(task.id, by, asPlanner), ...(check ? { check: { command: check.command, passed: true } } : {}) };
    },
  }),
} as const;

export type TeamToolName = keyof typeof TEAM_TOOLS;

/** A tool as an agent's MCP server lists it. */
export interface TeamToolListing {
  /** The MCP name (`tabs_list`). */
  name: string;
  description: string;
  /** Its parameters (the same schema the call is checked with). */
  params: z.ZodObject;
}

/** The tools a team's planner, or one of its workers, may call: what its MCP server lists. */
export function teamToolsFor(member: 'planner' | 'worker'): TeamToolListing[] {
  return (Object.keys(TEAM_TOOLS) as TeamToolName[])
    .filter((name) => member === 'planner' || TEAM_TOOLS[name].workers)
    .map((name) => ({ name: mcpToolName(name), description: TEAM_TOOLS[name].description, params: TEAM_TOOLS[name].params as z.ZodObject }));
}

/** A tool's name as MCP carries it: CLIs accept `[a-zA-Z0-9_-]` only (`tabs_list`). */
export function mcpToolName(name: TeamToolName): string {
  return name.replace('.', '_');
}

/** The seed name of a tool from either spelling, or undefined. */
export function toolNamed(name: string): TeamToolName | undefined {
  const seedName = name.includes('.') ? name : name.replace('_', '.');
  return Object.hasOwn(TEAM_TOOLS, seedName) ? (seedName as TeamToolName) : undefined;
}

/** Runs one call for `caller`: the outcome, never a throw. */
export async function callTeamTool(name: string, params: unknown, caller: ToolCaller, deps: ToolDeps): Promise<ToolOutcome> {
  const known = toolNamed(name);
  if (!known) return failure('METHOD_NOT_FOUND', `no tool '${name}' (there are: ${Object.keys(TEAM_TOOLS).join(', ')})`);
  const spec = TEAM_TOOLS[known] as ToolSpec<z.ZodType>;
  if (caller.kind === 'worker' && !spec.workers) return failure('FORBIDDEN', `${known} is the planner's; a worker may use the tasks tools only`);
  const parsed = spec.params.safeParse(params ?? {});
  if (!parsed.success) return failure('INVALID_PARAMS', `${known}: ${describeIssues(parsed.error)}`);
  try {
    return { ok: true, result: await spec.run(parsed.data, caller, deps) };
  } catch (err) {
    if (isSwitchboardError(err)) return failure(err.code, err.message);
    if (deps.signal.aborted) return failure('SHUTTING_DOWN', 'the team run ended while the tool ran');
    return failure('INTERNAL_ERROR', `${known} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * The risk gate before text reaches a worker, an approval request of the broker (source: the
 * orchestrator) like any agent's: the judgement is its rule step (low passes, medium as the preset
 * says, high asks), and a person at the board is who it asks. Unanswered, nothing is sent.
 */
async function gate(workerId: string, text: string, deps: ToolDeps): Promise<RiskJudgement> {
  const context = deps.riskContext(workerId);
  const judgement = judgeRisk(text, context);
  let answer: GateAnswer | undefined;
  const request: ApprovalRequest = { id: `gate:${workerId}`, source: { kind: 'orchestrator', workerId }, subject: { tool: 'shell', command: text, ...(context.dialect ? { shell: context.dialect } : {}) }, certain: true, doubts: [] };
  const outcome = await decideApproval(
    request,
    {
      policy: () => gateVerdict(judgement, deps.medium),
      context,
      person: async (_request, signal) => {
        answer = await deps.port.confirm({ workerId, text, judgement }, signal ?? deps.signal);
        return answer.unanswered ? null : answer.decision;
      },
      otherwise: 'deny',
    },
    deps.signal,
  );
  if (outcome.decision === 'allow') return judgement;
  const first = judgement.findings[0];
  const who = answer?.by ?? outcome.reason;
  throw new SwitchboardError('FORBIDDEN', `${who} did not let this text go to ${workerId} (${judgement.level} risk${first ? `: ${first.command}: ${first.reason}` : ''}); it was not sent`, { decided_by: outcome.decidedBy, reason: outcome.reason });
}

/** The risk judgement as the broker's first step says it: low (and medium the preset lets pass) allowed, the rest asked. */
function gateVerdict(judgement: RiskJudgement, medium: ToolDeps['medium']): PolicyVerdict {
  const passes = judgement.level === 'low' || (judgement.level === 'medium' && medium === 'pass');
  const first = judgement.findings[0];
  const why = first ? `${judgement.level} risk: ${first.command}: ${first.reason}` : `${judgement.level} risk`;
  return { decision: passes ? 'allow' : 'ask', reason: `${passes ? 'allowed' : 'asked'}: the risk gate found ${why}`, rule: null, basis: 'rule', ruleName: `risk.${judgement.level}`, parts: [] };
}

function ownerFor(caller: ToolCaller, named: string | undefined, port: TeamPort): string {
  if (caller.kind === 'worker') return caller.workerId;
  if (!named) throw new SwitchboardError('INVALID_PARAMS', 'tasks.claim by the planner names the worker who takes it (tabId)');
  const ids = port.workers().map((w) => w.id);
  if (!ids.includes(named)) throw new SwitchboardError('INVALID_PARAMS', `no worker ${named} (there are: ${ids.join(', ') || 'none'})`, { tab_id: named });
  return named;
}

function failure(code: string, message: string): ToolOutcome {
  return { ok: false, error: { code, message } };
}
