import { compileSafeRegex } from '../../core/safe-regex.js';
import { checkBlocklist } from './blocklist.js';
import { unreadableCode } from './code-runs.js';
import { pathOperands, unwrap, writeTargets } from './commands.js';
import { networkUse } from './network.js';
import { classifyPath, combineChains, globMatches, isInside, pathEnv, resolveChain, wordFromString, type CwdChains, type PathEnv } from './paths.js';
import { splitShellCommand } from './split.js';
import type { ApprovalPolicy, ApprovalSubject, Decision, PolicyContext, PolicyRule, PolicyVerdict, PolicyVerdictPart, ShellDialect, VerdictBasis, ShellWord, SimpleCommand, ToolKind } from './types.js';

/**
 * Judges one tool call. Shell commands are split into simple commands and each is judged on its
 * own (first matching rule, else the default; then the blocklist, what cannot be parsed or runs
 * code the policy cannot read, the files it writes, and the network it reaches, judged as a
 * `network` call); the most restrictive decision wins.
 */

const SEVERITY: Readonly<Record<Decision, number>> = { allow: 0, ask: 1, deny: 2 };
const VERB: Readonly<Record<Decision, string>> = { allow: 'allowed', ask: 'asked', deny: 'denied' };
const MAX_SCRIPT_DEPTH = 4;
const MAX_REGEX_CACHE = 512;
const regexCache = new Map<string, RegExp>();

interface Outcome {
  decision: Decision;
  reason: string;
  rule: number | null;
  basis: VerdictBasis;
  /** How telling the reason is among equal decisions: 0 blocklist, 1 cannot be judged, 2 rules and default. */
  rank: number;
}

/** Where a subject acts, for the rules' `path` conditions. */
interface PathFacts {
  /** False for subjects that name no place (an MCP tool without a path): path conditions never match them. */
  hasPath: boolean;
  inside: boolean;
  resolved: string[];
}

/** The most restrictive of the outcomes; among equals, the most telling reason, then the first. */
function worst(outcomes: Outcome[]): Outcome {
  let best = outcomes[0] as Outcome;
  for (const o of outcomes) {
    const d = SEVERITY[o.decision] - SEVERITY[best.decision];
    if (d > 0 || (d === 0 && o.rank < best.rank)) best = o;
  }
  return best;
}

function ruleRegex(pattern: string): RegExp {
  let re = regexCache.get(pattern);
  if (!re) {
    re = compileSafeRegex(pattern);
    if (regexCache.size >= MAX_REGEX_CACHE) regexCache.clear();
    regexCache.set(pattern, re);
  }
  return re;
}

const toolsOf = (rule: PolicyRule): ToolKind[] | null => (rule.tool === undefined ? null : Array.isArray(rule.tool) ? rule.tool : [rule.tool]);

/** A rule in words, for reasons: its own `reason`, else what it matches. */
export function describeRule(rule: PolicyRule): string {
  if (rule.reason) return rule.reason;
  const tools = toolsOf(rule);
  const what = [tools ? tools.join('/') : 'any tool'];
  if (rule.command !== undefined) what.push(`matching /${rule.command}/`);
  if (rule.path === 'inside_workdir') what.push('inside the workdir');
  else if (rule.path === 'outside_workdir') what.push('outside the workdir');
  else if (rule.path !== undefined) what.push(`under ${rule.path}`);
  return what.join(' ');
}

function ruleMatches(rule: PolicyRule, tool: ToolKind, text: string | undefined, facts: PathFacts, env: PathEnv): boolean {
  const tools = toolsOf(rule);
  if (tools && !tools.includes(tool)) return false;
  if (rule.command !== undefined && (text === undefined || !ruleRegex(rule.command).test(text))) return false;
  if (rule.path !== undefined) {
    if (!facts.hasPath) return false;
    if (rule.path === 'inside_workdir') return facts.inside;
    if (rule.path === 'outside_workdir') return !facts.inside;
    const glob = rule.path;
    return facts.resolved.some((r) => globMatches(glob, r, env));
  }
  return true;
}

/** The first matching rule's decision, else the default. */
function decide(policy: ApprovalPolicy, tool: ToolKind, text: string | undefined, facts: PathFacts, env: PathEnv): Outcome {
  for (const [k, rule] of policy.rules.entries()) {
    if (ruleMatches(rule, tool, text, facts, env)) return { decision: rule.decision, reason: `${VERB[rule.decision]} by rule ${k + 1}: ${describeRule(rule)}`, rule: k, basis: 'rule', rank: 2 };
  }
  return { decision: policy.default, reason: `${VERB[policy.default]} by default: no rule matched`, rule: null, basis: 'default', rank: 2 };
}

function pathFacts(words: ShellWord[], chains: CwdChains, env: PathEnv, includeCwd: boolean): PathFacts {
  const facts: PathFacts = { hasPath: true, inside: true, resolved: [] };
  if (includeCwd) {
    for (const chain of chains) {
      const dir = resolveChain(chain, env);
      if (dir === null) facts.inside = false;
      else {
        facts.resolved.push(dir);
        if (!isInside(dir, env)) facts.inside = false;
      }
    }
  }
  for (const w of words) {
    const c = classifyPath(w, chains, env);
    if (c.status === 'sink') continue;
    facts.resolved.push(...c.resolved);
    if (c.status !== 'inside') facts.inside = false;
  }
  return facts;
}

/** A network call names no place on disk: `path` conditions never match it. */
const NO_PATH: PathFacts = { hasPath: false, inside: false, resolved: [] };

const truncate = (s: string, n = 80): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** Decides whether an agent CLI may make a tool call: allow, deny, or ask the user; with the reason. */
export function evaluatePolicy(policy: ApprovalPolicy, subject: ApprovalSubject, ctx: PolicyContext): PolicyVerdict {
  const env = pathEnv(ctx);
  if (subject.tool === 'shell') {
    const dialect: ShellDialect = subject.shell ?? (env.win ? 'powershell' : 'posix');
    const judged = judgeScript(subject.command ?? '', dialect, [[]], policy, ctx, env, 0);
    const parts: PolicyVerdictPart[] = judged.map(({ text, outcome }) => ({ command: text, decision: outcome.decision, reason: outcome.reason }));
    const top = worst(judged.map((x) => x.outcome));
    const deciding = judged.find((j) => j.outcome === top) as Judged;
    // Name the part that decided, unless every part was allowed.
    const reason = judged.length > 1 && top.decision !== 'allow' ? `${top.reason} (in \`${truncate(deciding.text)}\`)` : top.reason;
    return { decision: top.decision, reason, rule: top.rule, basis: top.basis, parts };
  }
  const { decision, reason, rule, basis } = decide(policy, subject.tool, subjectText(subject), subjectFacts(subject, env), env);
  return { decision, reason, rule, basis, parts: [] };
}

/** What a rule's `command` pattern is tried against, for tools other than the shell. */
function subjectText(subject: ApprovalSubject): string | undefined {
  switch (subject.tool) {
    case 'mcp':
      return subject.toolName ?? subject.command;
    case 'network':
      return subject.url ?? subject.command;
    case 'internal':
    case 'other':
      return subject.toolName ?? subject.command;
    default:
      return subject.command;
  }
}

function subjectFacts(subject: ApprovalSubject, env: PathEnv): PathFacts {
  const fileTool = subject.tool === 'file_read' || subject.tool === 'file_edit' || subject.tool === 'file_write';
  // A file call that does not say which file cannot be shown to be inside the workdir.
  if (subject.path === undefined) return { hasPath: fileTool, inside: false, resolved: [] };
  return pathFacts([wordFromString(subject.path)], [[]], env, false);
}

interface Judged {
  text: string;
  outcome: Outcome;
}

function judgeScript(command: string, dialect: ShellDialect, outer: CwdChains, policy: ApprovalPolicy, ctx: PolicyContext, env: PathEnv, depth: number): Judged[] {
  const split = splitShellCommand(command, dialect);
  if ('error' in split) {
    return [{ text: command, outcome: { decision: 'ask', reason: `asked: the command cannot be parsed with confidence (${split.error})`, rule: null, basis: 'unreadable', rank: 1 } }];
  }
  if (split.parts.length === 0) return [{ text: command, outcome: { decision: 'ask', reason: 'asked: the command is empty', rule: null, basis: 'unreadable', rank: 1 } }];
  const placed = depth === 0 ? split.parts : split.parts.map((part) => ({ ...part, cwd: combineChains(outer, part.cwd) }));
  // Which parts run code that cannot be read is a question about the whole line: a later part may run what an earlier one writes.
  const unreadable = unreadableCode(placed, env);
  return placed.map((part) => ({ text: part.text, outcome: judgePart(part, unreadable.get(part) ?? [], policy, ctx, env, depth) }));
}

/** One simple command: the blocklist, what cannot be judged, inline scripts, the rules, the files it writes, the network it reaches. */
function judgePart(part: SimpleCommand, unreadable: string[], policy: ApprovalPolicy, ctx: PolicyContext, env: PathEnv, depth: number): Outcome {
  const outcomes: Outcome[] = [];
  const u = unwrap(part.words, part.dialect);
  const chains: CwdChains = u.cwdUnknown ? [[null]] : part.cwd;

  const hit = checkBlocklist(part, ctx);
  if (hit) outcomes.push({ decision: hit.decision, reason: hit.reason, rule: null, basis: 'blocklist', rank: 0 });
  for (const note of [...part.unsure, ...u.notes, ...unreadable]) outcomes.push({ decision: 'ask', reason: `asked: ${note}`, rule: null, basis: 'unreadable', rank: 1 });
  for (const inv of [...u.wrappers, ...(u.command ? [u.command] : [])]) {
    const head = inv.words[0];
    if (head && (head.dynamic || head.code)) outcomes.push({ decision: 'ask', reason: `asked: the command name ${truncate(head.text, 40)} is not known until it runs`, rule: null, basis: 'unreadable', rank: 1 });
  }
  if (u.script) {
    if (depth >= MAX_SCRIPT_DEPTH) outcomes.push({ decision: 'ask', reason: 'asked: scripts nested too deeply to judge', rule: null, basis: 'unreadable', rank: 1 });
    else outcomes.push(worst(judgeScript(u.script.text, u.script.dialect, chains, policy, ctx, env, depth + 1).map((j) => j.outcome)));
  }
  const writes = writeTargets(part, u);
  const reads = part.redirects.filter((r) => r.kind === 'read' && r.target).map((r) => r.target as ShellWord);
  for (const w of writes) {
    const o = decide(policy, 'file_write', undefined, pathFacts([w], chains, env, false), env);
    outcomes.push({ ...o, reason: `${o.reason} (writes ${truncate(w.text, 60)})` });
  }
  const net = networkUse(part, u);
  for (const target of net ? (net.targets.length > 0 ? net.targets : [part.text]) : []) {
    const o = decide(policy, 'network', target, NO_PATH, env);
    outcomes.push({ ...o, reason: `${o.reason} (${truncate(net?.what ?? '', 100)})` });
  }
  outcomes.push(decide(policy, 'shell', part.text, pathFacts([...pathOperands(part, u), ...reads, ...writes], chains, env, true), env));
  return worst(outcomes);
}
