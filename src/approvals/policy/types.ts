/**
 * The approval policy's vocabulary: what an agent CLI asks to do (a subject), the rules that judge
 * it, and the verdict with its reasons. Shell commands are split into simple commands first, so the
 * parsed shapes live here too.
 */

import type { ShellDialect, ToolKind } from '../../contract/approval.js';

// The tool kinds, shell dialects and the subject (one tool call an agent CLI wants to make) are the
// shared vocabulary (src/contract/approval.ts).
export type { ToolKind, ShellDialect, ApprovalSubject } from '../../contract/approval.js';
export type Decision = 'allow' | 'deny' | 'ask';

export interface PolicyContext {
  workdir: string;
  home: string;
  /** Chooses the path flavour (path.win32 on win32) and the default shell dialect. */
  platform?: NodeJS.Platform;
}

export interface PolicyVerdictPart {
  command: string;
  decision: Decision;
  reason: string;
}

/**
 * What made a verdict, as data (a record names it without reading the reason): a rule of the
 * policy (`rule` says which), the policy's default, the fixed blocklist, or input that cannot be
 * judged (a command that does not parse, code it cannot read, a prompt read without certainty).
 */
export type VerdictBasis = 'rule' | 'default' | 'blocklist' | 'unreadable';

export interface PolicyVerdict {
  decision: Decision;
  reason: string;
  /** 0-based index into `policy.rules` of the deciding rule; null for the default, the blocklist or a parse failure. */
  rule: number | null;
  basis: VerdictBasis;
  /** The rule as a record names it, where the judge names its rules (a run's governance: `approvals.rules[2]`, `sandbox.roots`, `blocklist`). */
  ruleName?: string;
  /** One entry per simple command of a shell command (empty for other tools). */
  parts: PolicyVerdictPart[];
}

export interface PolicyRule {
  decision: Decision;
  tool?: ToolKind | ToolKind[];
  /**
   * A regular expression, tried against each simple shell command as written (for mcp the tool
   * name, for network the URL, for other tools the tool name or command).
   */
  command?: string;
  /**
   * Where the call acts: inside or outside the workdir, or a glob (`~` is the home directory,
   * relative globs are relative to the workdir, a glob naming a folder covers what is inside it).
   * `string & Record<never, never>` keeps the two keywords visible to editors.
   */
  path?: 'inside_workdir' | 'outside_workdir' | (string & Record<never, never>);
  reason?: string;
}

export interface ApprovalPolicy {
  rules: PolicyRule[];
  default: Decision;
}

/** An expansion inside a word, e.g. `$HOME` or `%USERPROFILE%`; offsets index `ShellWord.text`. */
export interface ShellVar {
  name: string;
  start: number;
  end: number;
}

/** One word of a simple command after quote removal. Expansions stay as written. */
export interface ShellWord {
  text: string;
  /** Some of it was quoted or escaped (so it is not a reserved word or an operator). */
  quoted: boolean;
  /** Parameter and variable expansions that take effect (not those in single quotes). */
  vars: ShellVar[];
  /** Its value is not known before the command runs: expansions, substitutions, brace expansion. */
  dynamic: boolean;
  /** Holds unquoted glob characters. */
  glob: boolean;
  /** A PowerShell script block `{ … }` or a parenthesised expression: code, not a path. */
  code: boolean;
}

type RedirectKind = 'write' | 'read' | 'dup' | 'heredoc';

export interface ShellRedirect {
  op: string;
  kind: RedirectKind;
  /** The file, or null for fd duplication (`2>&1`) and here-documents. */
  target: ShellWord | null;
}

export type ShellOperator = ';' | '&&' | '||' | '|' | '&' | '\n';

/** One simple command of a (possibly compound) shell command. */
export interface SimpleCommand {
  dialect: ShellDialect;
  /** The command as written, trimmed. */
  text: string;
  /** The words after assignments and reserved words, redirections taken out. */
  words: ShellWord[];
  argv: string[];
  /** Leading `NAME=value` (or PowerShell `$name =`) assignments. */
  assignments: string[];
  redirects: ShellRedirect[];
  /** Why this command cannot be judged with confidence (substitutions, here-documents, …). */
  unsure: string[];
  /** What it is nested in (`$(...)`, a backtick substitution, a script block, …), or null. */
  nested: string | null;
  /** The operators before and after it. */
  before: ShellOperator | null;
  after: ShellOperator | null;
  /** The argv of the commands before it in its pipeline. */
  upstream: string[][];
  /** The shell function whose body holds it, if any. */
  inFunction: string | null;
  /**
   * Where it may run: each entry is one possible chain of directory changes (`cd` targets, null
   * when unknown) applied from the workdir. `[[]]` means the workdir itself.
   */
  cwd: (ShellWord | null)[][];
}

export type SplitResult = { parts: SimpleCommand[] } | { error: string };
