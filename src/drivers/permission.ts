/**
 * The structured modes' adapter to the approval broker: a permission request raised by a CLI in a
 * structured mode (Claude's can_use_tool, ACP's session/request_permission) becomes an approval
 * request and goes through the same chain as a screen's prompt (src/approvals/broker.ts): the policy
 * first, then the caller's callback for what the policy leaves open, else deny (no one is there to
 * ask, and the CLI waits for an answer). A caller with a chain of its own (a run's governance, which
 * records each decision with its rule) gives a judge instead, and its words are the answer's.
 */
import { homedir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { errorMessage } from '../core/errors.js';
import { entryTypeForTool, filePathOf } from '../output/entry.js';
import { decideApproval, type ApprovalPolicy, type ApprovalRequest, type ApprovalSubject, type DecidedBy } from '../approvals/index.js';

export interface PermissionRequest {
  /** The CLI's tool name (Bash, run_shell_command, edit, …). */
  toolName: string;
  /** What the policy judges. */
  subject: ApprovalSubject;
  /** The tool's input as the CLI sent it. */
  input: Record<string, unknown>;
  /** The tool call this is for, where the CLI names it. */
  toolCallId?: string;
}

export interface PermissionAnswer {
  request: PermissionRequest;
  decision: 'allow' | 'deny';
  reason: string;
  /** Who decided, in the broker's words (here the policy, the callback, or the default: no one answers). */
  decidedBy: DecidedBy;
}
/**
 * Claude Code's tools for the agent's own machinery (2.1.332's names, and the older ones still
 * met): they act on nothing outside the agent, so the built-in policy allows them (`internal`).
 * With every tool call asked (claude-ask-all.ts) they are asked about too, and a bridge run, with
 * no one to ask, would otherwise deny them and fail.
 * - Agent (Task before 2.1): starts a subagent. The subagent's own tool calls are asked one by one
 *   (with its parent_tool_use_id), so starting it decides nothing. ListAgents lists the agent
 *   types, SendMessage writes to a running subagent, TaskOutput/BashOutput read a background
 *   task's output, TaskStop/KillShell stop one (the agent's own, started by an asked call).
 * - TodoWrite, TodoRead, TaskCreate/Get/Update/List: the agent's to-do list.
 * - ToolSearch: loads the definition of a deferred tool (its use is asked when it is called).
 * - Skill: loads a skill's instructions; what the skill then does is asked call by call.
 * - EnterPlanMode, ExitPlanMode: plan mode; ReportFindings: a review's findings as data.
 * Not here, so asked like any tool the policy does not know: AskUserQuestion (a person's answer:
 * no one is there in a bridge run), ScheduleWakeup, CronCreate/Delete, RemoteTrigger (work later,
 * outside the turn), Workflow (runs a script), Monitor (runs a command), EnterWorktree/ExitWorktree
 * (create and remove folders).
 */
const INTERNAL_TOOLS: ReadonlySet<string> = new Set([
  'Agent',
  'Task',
  'ListAgents',
  'SendMessage',
  'TaskOutput',
  'BashOutput',
  'TaskStop',
  'KillShell',
  'TodoWrite',
  'TodoRead',
  'TaskCreate',
  'TaskGet',
  'TaskUpdate',
  'TaskList',
  'ToolSearch',
  'Skill',
  'EnterPlanMode',
  'ExitPlanMode',
  'ReportFindings',
]);

/** Claude Code's search and listing tools: reads of the folder they search (the workdir when they name none). */
const SEARCH_TOOLS: ReadonlySet<string> = new Set(['Grep', 'Glob', 'LS']);

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * Where a search reads. A Glob's pattern is joined to its folder, so that the policy sees what it
 * can reach (`../**`, `src/*.ts`); a pattern that starts at the root, the home directory or a
 * variable reaches there whatever the folder (the glob library ignores the folder for it).
 */
function searchedPath(toolName: string, input: Record<string, unknown>): string {
  const folder = text(input.path);
  const pattern = toolName === 'Glob' ? text(input.pattern) : undefined;
  if (pattern === undefined) return folder ?? '.';
  if (folder === undefined || /^(?:[/\\~$%]|[A-Za-z]:[/\\])/.test(pattern)) return pattern;
  return /[/\\]$/.test(folder) ? `${folder}${pattern}` : `${folder}/${pattern}`;
}

/** The policy's subject for a tool call given by name and input (structured modes say both). */
export function subjectForTool(toolName: string, input: Record<string, unknown>): ApprovalSubject {
  const command = typeof input.command === 'string' ? input.command : Array.isArray(input.command) ? input.command.map(String).join(' ') : undefined;
  const file = filePathOf(input);
  if (SEARCH_TOOLS.has(toolName)) return { tool: 'file_read', toolName, path: searchedPath(toolName, input) };
  if (INTERNAL_TOOLS.has(toolName)) return { tool: 'internal', toolName };
  switch (entryTypeForTool(toolName)) {
    case 'command_run':
      return { tool: 'shell', toolName, ...(command !== undefined ? { command } : {}) };
    case 'file_edit':
      return { tool: /write/i.test(toolName) ? 'file_write' : 'file_edit', toolName, ...(file !== undefined ? { path: file } : {}) };
    case 'file_read':
      return { tool: 'file_read', toolName, ...(file !== undefined ? { path: file } : {}) };
    default:
      if (toolName.startsWith('mcp__')) return { tool: 'mcp', toolName };
      if (/fetch|search|web/i.test(toolName)) return { tool: 'network', toolName, ...(typeof input.url === 'string' ? { url: input.url } : {}) };
      return { tool: 'other', toolName, ...(command !== undefined ? { command } : {}) };
  }
}

/** A judge of permission requests that decides, and words, each one itself (ConversationOptions.judge). */
export type PermissionJudge = (request: PermissionRequest) => Promise<Omit<PermissionAnswer, 'request'>>;

export interface DecideOptions {
  policy: ApprovalPolicy;
  workdir: string;
  home?: string;
  onPermission?: (request: PermissionRequest) => Promise<'allow' | 'deny'>;
  /** Decides in place of the policy and the callback. */
  judge?: PermissionJudge | undefined;
}

/** The broker's request for a structured mode's permission request (always certain: the CLI said what it runs). */
function approvalRequestFor(request: PermissionRequest): ApprovalRequest {
  const toolCallId = request.toolCallId ?? null;
  return { id: toolCallId ?? `permission-${randomBytes(4).toString('hex')}`, source: { kind: 'structured', toolCallId }, subject: request.subject, certain: true, doubts: [] };
}

/** Judges one request: policy, then callback, then deny. A throwing callback denies. */
export async function decidePermission(request: PermissionRequest, options: DecideOptions): Promise<PermissionAnswer> {
  const { onPermission, judge } = options;
  if (judge) {
    try {
      return { request, ...(await judge(request)) };
    } catch (err) {
      return { request, decision: 'deny', reason: `denied: the judge failed (${errorMessage(err)})`, decidedBy: 'default' };
    }
  }
  const outcome = await decideApproval(approvalRequestFor(request), {
    policy: options.policy,
    context: { workdir: options.workdir, home: options.home ?? homedir() },
    ...(onPermission ? { callback: { name: 'onPermission', decide: () => onPermission(request), onError: 'deny' as const } } : {}),
    otherwise: 'deny',
    missing: 'no onPermission callback',
  });
  // No person in this chain and its end denies: the outcome is always a decision.
  const decision = outcome.decision === 'allow' ? 'allow' : 'deny';
  return { request, decision, reason: outcome.reason, decidedBy: outcome.decidedBy };
}
