/**
 * A permission request raised by a CLI in a structured mode (Claude's can_use_tool, ACP's
 * session/request_permission), judged the way an approval prompt on a screen is: the policy first,
 * then the caller's callback for what the policy leaves open, else deny (no one is there to ask).
 */
import { homedir } from 'node:os';
import { entryTypeForTool, filePathOf } from '../output/entry.js';
import { evaluatePolicy, type ApprovalPolicy, type ApprovalSubject, type Decision } from '../approvals/policy/index.js';

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
  decidedBy: 'policy' | 'callback' | 'default';
}

/** The policy's subject for a tool call given by name and input (structured modes say both). */
export function subjectForTool(toolName: string, input: Record<string, unknown>): ApprovalSubject {
  const command = typeof input.command === 'string' ? input.command : Array.isArray(input.command) ? input.command.map(String).join(' ') : undefined;
  const file = filePathOf(input);
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

export interface DecideOptions {
  policy: ApprovalPolicy;
  workdir: string;
  home?: string;
  onPermission?: (request: PermissionRequest) => Promise<'allow' | 'deny'>;
}

/** Judges one request: policy, then callback, then deny. A throwing callback denies. */
export async function decidePermission(request: PermissionRequest, options: DecideOptions): Promise<PermissionAnswer> {
  const verdict = evaluatePolicy(options.policy, request.subject, { workdir: options.workdir, home: options.home ?? homedir() });
  const decided = (decision: Decision): decision is 'allow' | 'deny' => decision !== 'ask';
  if (decided(verdict.decision)) return { request, decision: verdict.decision, reason: verdict.reason, decidedBy: 'policy' };
  if (!options.onPermission) return { request, decision: 'deny', reason: `denied: ${verdict.reason}, and no one answers (no onPermission callback)`, decidedBy: 'default' };
  try {
    const answer = await options.onPermission(request);
    return { request, decision: answer, reason: `${answer === 'allow' ? 'allowed' : 'denied'} by the onPermission callback (policy: ${verdict.reason})`, decidedBy: 'callback' };
  } catch (err) {
    return { request, decision: 'deny', reason: `denied: the onPermission callback failed (${(err as Error).message})`, decidedBy: 'default' };
  }
}
