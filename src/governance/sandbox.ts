/**
 * The directory sandbox: a run's folder must be under one of the allowed roots, and the file edits
 * and shell commands of its agent must not reach outside them. Every path is judged where it really
 * is, through symbolic links (a link inside a root that points out of it is outside).
 *
 * Shell commands are read with the approval policy's own parser (src/approvals/policy/: splitting
 * by dialect, seeing through wrappers like `sudo` and `bash -c`, the operands and redirections that
 * name files, `cd` chains): the sandbox asks the same questions of the same reading, so a command
 * cannot look harmless to one and dangerous to the other. What cannot be placed (a path that
 * depends on a variable, a `cd` to somewhere unknown, a script file run by an interpreter or by its
 * path, a file the same line writes and then runs) is outside until shown otherwise.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { splitShellCommand, type ApprovalSubject, type ShellDialect, type ShellWord } from '../approvals/policy/index.js';
import { pathOperands, unwrap, writeTargets } from '../approvals/policy/commands.js';
import { unreadableCode } from '../approvals/policy/code-runs.js';
import { classifyPath, combineChains, pathEnv, resolveChain, type CwdChains, type PathEnv } from '../approvals/policy/paths.js';
import { isWindows } from '../platform/index.js';

export interface SandboxVerdict {
  decision: 'allow' | 'deny';
  reason: string;
  /** The rule that decided: `sandbox.roots`, or `sandbox.unknown_path` for what cannot be placed. */
  rule: string;
}

/** Where tools name a file or folder in their input, whatever their kind. */
const PATH_KEYS = ['file_path', 'filePath', 'filepath', 'path', 'absolute_path', 'directory', 'dir'];
/** Nested `bash -c '…'` scripts are read this deep, like the approval policy. */
const MAX_SCRIPT_DEPTH = 4;

/**
 * The real path of `p`: symbolic links resolved in the part that exists, the rest (a file about to
 * be created) appended as written.
 */
export function realPathLoose(p: string): string {
  const abs = path.resolve(p);
  const rest: string[] = [];
  let head = abs;
  for (;;) {
    try {
      return path.join(realpathSync.native(head), ...rest.reverse());
    } catch {
      const parent = path.dirname(head);
      if (parent === head) return abs;
      rest.push(path.basename(head));
      head = parent;
    }
  }
}

function under(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

export class Sandbox {
  /** The roots as they really are (symlinks resolved). */
  readonly roots: readonly string[];

  constructor(
    roots: readonly string[],
    private readonly home: string = homedir(),
  ) {
    this.roots = roots.map(realPathLoose);
  }

  /** True when `p` (resolved through symlinks) is under a root. */
  contains(p: string): boolean {
    const real = realPathLoose(p);
    return this.roots.some((root) => under(root, real));
  }

  /** A run's folder: under a root, or refused. */
  checkFolder(cwd: string): SandboxVerdict {
    const real = realPathLoose(cwd);
    if (this.roots.some((root) => under(root, real))) return { decision: 'allow', reason: `${cwd} is inside the sandbox`, rule: 'sandbox.roots' };
    const shown = real === path.resolve(cwd) ? cwd : `${cwd} (really ${real})`;
    return { decision: 'deny', reason: `${shown} is outside the sandbox (allowed: ${this.roots.join(', ')})`, rule: 'sandbox.roots' };
  }

  /**
   * A tool call of a run in `cwd`: file edits and writes must stay inside, and so must every path a
   * shell command names or runs in. Reads and other tools are the approval policy's to judge.
   */
  checkToolCall(subject: ApprovalSubject, cwd: string, input: Record<string, unknown> = {}): SandboxVerdict {
    switch (subject.tool) {
      case 'file_edit':
      case 'file_write': {
        if (subject.path === undefined) return { decision: 'deny', reason: `${subject.toolName ?? subject.tool} does not say which file it changes`, rule: 'sandbox.unknown_path' };
        const target = path.resolve(cwd, subject.path.startsWith('~') ? path.join(this.home, subject.path.slice(1)) : subject.path);
        return this.contains(target) ? { decision: 'allow', reason: `${subject.path} is inside the sandbox`, rule: 'sandbox.roots' } : { decision: 'deny', reason: `${subject.path} is outside the sandbox`, rule: 'sandbox.roots' };
      }
      case 'shell': {
        const env = pathEnv({ workdir: realPathLoose(cwd), home: this.home });
        const problem = this.shellProblem(subject.command ?? '', subject.shell ?? (isWindows ? 'powershell' : 'posix'), [[]], env, 0);
        return problem ?? { decision: 'allow', reason: 'every path it names is inside the sandbox', rule: 'sandbox.roots' };
      }
      case 'other':
      case 'internal':
      case 'mcp': {
        // A tool the policy has no kind for may still name where it acts (OpenCode asks for an
        // "external directory" with the file in its input): a place outside is outside.
        const named = PATH_KEYS.map((k) => input[k]).find((v): v is string => typeof v === 'string' && v !== '');
        if (named === undefined) return { decision: 'allow', reason: `the sandbox does not judge ${subject.tool}`, rule: 'sandbox.roots' };
        const target = path.resolve(cwd, named.startsWith('~') ? path.join(this.home, named.slice(1)) : named);
        return this.contains(target) ? { decision: 'allow', reason: `${named} is inside the sandbox`, rule: 'sandbox.roots' } : { decision: 'deny', reason: `${named} is outside the sandbox`, rule: 'sandbox.roots' };
      }
      default:
        return { decision: 'allow', reason: `the sandbox does not judge ${subject.tool}`, rule: 'sandbox.roots' };
    }
  }

  /** The first thing in a shell script that reaches outside, or undefined. */
  private shellProblem(command: string, dialect: ShellDialect, outer: CwdChains, env: PathEnv, depth: number): SandboxVerdict | undefined {
    const split = splitShellCommand(command, dialect);
    if ('error' in split) return { decision: 'deny', reason: `the command cannot be read with confidence (${split.error})`, rule: 'sandbox.unknown_path' };
    const parts = depth === 0 ? split.parts : split.parts.map((raw) => ({ ...raw, cwd: combineChains(outer, raw.cwd) }));
    // A script's paths are in a file, not in the command: where it reaches cannot be known before it runs.
    const unreadable = unreadableCode(parts, env);
    for (const part of parts) {
      const code = unreadable.get(part)?.[0];
      if (code !== undefined) return { decision: 'deny', reason: `\`${part.text}\`: ${code}, so where it reaches cannot be known before it runs`, rule: 'sandbox.unknown_path' };
      const u = unwrap(part.words, part.dialect);
      const chains: CwdChains = u.cwdUnknown ? [[null]] : part.cwd;
      for (const chain of chains) {
        const dir = resolveChain(chain, env);
        if (dir === null) return { decision: 'deny', reason: `\`${part.text}\` runs in a folder that cannot be known before it runs`, rule: 'sandbox.unknown_path' };
        if (!this.contains(dir)) return { decision: 'deny', reason: `\`${part.text}\` runs in ${dir}, outside the sandbox`, rule: 'sandbox.roots' };
      }
      const reads = part.redirects.filter((r) => r.kind === 'read' && r.target).map((r) => r.target as ShellWord);
      for (const word of [...pathOperands(part, u), ...reads, ...writeTargets(part, u)]) {
        const c = classifyPath(word, chains, env);
        if (c.status === 'sink') continue;
        if (c.status === 'unknown' || c.resolved.length === 0) return { decision: 'deny', reason: `\`${part.text}\` names ${word.text}, which cannot be placed before it runs`, rule: 'sandbox.unknown_path' };
        const outside = c.resolved.find((r) => !this.contains(r));
        if (outside !== undefined) return { decision: 'deny', reason: `\`${part.text}\` reaches ${outside}, outside the sandbox`, rule: 'sandbox.roots' };
      }
      if (u.script) {
        if (depth >= MAX_SCRIPT_DEPTH) return { decision: 'deny', reason: 'scripts nested too deeply to judge', rule: 'sandbox.unknown_path' };
        const inner = this.shellProblem(u.script.text, u.script.dialect, chains, env, depth + 1);
        if (inner) return inner;
      }
    }
    return undefined;
  }
}
