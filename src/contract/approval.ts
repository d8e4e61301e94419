/**
 * Approvals as every layer names them: the kinds of tool an agent asks to use, what an answer
 * means, the subject a policy judges, and an approval request as the wire carries it.
 */

/**
 * `internal` is the agent's own machinery, which touches nothing outside the agent: starting a
 * subagent (whose every act is asked on its own), its to-do list, loading a deferred tool's
 * definition, a skill's instructions, plan mode (src/drivers/permission.ts names them). `other` is
 * a tool the policy knows nothing about.
 */
export const TOOL_KINDS = ['shell', 'file_edit', 'file_write', 'file_read', 'network', 'mcp', 'internal', 'other'] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

/** What an option of an approval prompt means, when it can be told. */
export const ANSWER_MEANINGS = ['allow_once', 'allow_always', 'deny'] as const;
export type AnswerMeaning = (typeof ANSWER_MEANINGS)[number];

/** How a client answers an approval (answer_approval). */
export const APPROVAL_DECISIONS = ['allow', 'deny'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

/**
 * Who decided, in one vocabulary for every source and record (the approval broker, a run's ledger):
 * the policy (a run's governance); the caller's callback; a person (answer_approval, the
 * dashboard); the default at the end of the chain (denied: no one answers); no one (the request was
 * left open and handed back, or withdrawn before anyone decided); or the CLI itself (a call it
 * made or refused on its own, judged afterwards).
 */
export const DECIDERS = ['policy', 'callback', 'person', 'default', 'none'] as const;
export type DecidedBy = (typeof DECIDERS)[number];
export type RecordedDecider = DecidedBy | 'cli';

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

/** One answer an approval prompt offers. */
export interface ApprovalOption {
  /** The option's text as shown, without a trailing key hint such as "(y)" where the profile cuts it. */
  label: string;
  /** Keys (named keys, as send_keys takes them) that choose this option from the screen as it is. */
  keys: string[];
  /** What choosing it means; null for options a policy never picks ("Modify with external editor"). */
  meaning: AnswerMeaning | null;
  /**
   * Highlighted on screen (or the default an empty answer takes). When the screen cannot tell (a
   * CLI that marks it only by colour, read without colours), the first option, where these CLIs
   * put the highlight when a prompt opens.
   */
  selected: boolean;
}

/** A tool approval prompt, as parsed from the screen. */
export interface ApprovalPrompt {
  /**
   * True only when every row of the prompt was placed where its layout says (the kind's rows, the
   * question, known decorations), a witness on screen agrees, and nothing may be cut by wrapping.
   * A policy acts on an unsure request only by asking: it is never allowed automatically.
   */
  certain: boolean;
  /** Why the parse is not sure, in words (empty when certain). */
  doubts: string[];
  tool: ToolKind;
  /** The tool as the CLI names it ('Bash', 'Shell', 'WriteFile', …); null when the prompt does not say. */
  toolName: string | null;
  command: string | null;
  path: string | null;
  /** The answers offered, top to bottom or left to right; empty when the profile cannot read them. */
  options: ApprovalOption[];
  /** The screen row where the prompt begins (0 = top). */
  row: number;
}
