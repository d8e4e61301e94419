/**
 * Approvals as every layer names them: the kinds of tool an agent asks to use, what an answer
 * means, the subject a policy judges, and an approval request as the wire carries it.
 */

export const TOOL_KINDS = ['shell', 'file_edit', 'file_write', 'file_read', 'network', 'mcp', 'other'] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

/** What an option of an approval prompt means, when it can be told. */
export const ANSWER_MEANINGS = ['allow_once', 'allow_always', 'deny'] as const;
export type AnswerMeaning = (typeof ANSWER_MEANINGS)[number];

/** How a client answers an approval (answer_approval). */
export const APPROVAL_DECISIONS = ['allow', 'deny'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

export const SHELL_DIALECTS = ['posix', 'powershell', 'cmd'] as const;
export type ShellDialect = (typeof SHELL_DIALECTS)[number];

/** One tool call an agent CLI wants to make: what an approval policy judges. */
export interface ApprovalSubject {
  tool: ToolKind;
  command?: string;
  path?: string;
  /** The tool's own name, e.g. an MCP tool name. */
  toolName?: string;
  url?: string;
  /** How to read `command`; defaults to PowerShell on Windows and POSIX sh elsewhere. */
  shell?: ShellDialect;
}

/** An approval prompt as the wire carries it (pane_states, `state` notifications). */
export interface ApprovalInfo {
  /** Names this prompt for answer_approval (the toolCallId of its entry in the pane's log). */
  id: string | null;
  tool: ToolKind;
  tool_name: string | null;
  command: string | null;
  path: string | null;
  options: { label: string; meaning: AnswerMeaning | null }[];
}
