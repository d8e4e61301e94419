/**
 * Seed 003's risk gate (FR-006, §10.3): text the planner sends a worker (`tabs.send`, a
 * broadcast) is judged before it is typed, as low, medium or high. The text is usually prose with
 * commands in it, so the commands are looked for where a person would write them: prompt lines
 * (`$ git reset --hard`), inline code and fenced blocks, quoted text, and, inside a sentence,
 * from a command word on ("then run rm -rf build and test"); line continuations are joined first. Each candidate is split into its simple commands by
 * the approval policy's shell splitters and judged by the policy: anything its blocklist names
 * (the seed's list, `rm`, `del`, `rmdir`, `Remove-Item -Recurse`, `format`, `diskpart`,
 * `reg delete`, `shutdown`, `Stop-Computer`, `git reset --hard`, `git clean -fdx`, and what the
 * policy treats as destructive besides) or denies is high; what its rules would ask a person for
 * (the network, a path outside the folder, code it cannot read) is medium, in command-like text
 * only; a text that names a system location is high; the rest is low. The gate errs towards
 * asking: a destructive command named in a sentence is high even when the sentence only talks
 * about it.
 */
import { evaluatePolicy, type ApprovalPolicy, type PolicyContext, type ShellDialect } from '../approvals/index.js';

type RiskLevel = 'low' | 'medium' | 'high';

/** Why a text is at its level: the command as found, and the policy's reason. */
interface RiskFinding {
  level: Exclude<RiskLevel, 'low'>;
  command: string;
  reason: string;
}

export interface RiskJudgement {
  level: RiskLevel;
  /** Each command that raised the level, highest first (empty for low). */
  findings: RiskFinding[];
}

/** How a worker's text is judged: the policy of the worker it goes to, where it works, its shell. */
export interface RiskContext extends PolicyContext {
  policy: ApprovalPolicy;
  dialect?: ShellDialect;
}

/** Candidates past this many are not judged one by one: such a text is high on its face. */
const MAX_CANDIDATES = 500;
/** A sentence's tail judged from a command word on, at most this long. */
const MAX_TAIL_CHARS = 400;

/**
 * Command words a destructive command starts with, looked for inside sentences. The ones that
 * are also English words count only with an argument that looks like a command's (a flag, a
 * path, a drive), so "format the report as JSON" stays low.
 */
const COMMAND_WORDS = /(?<![\w-])(rm|rmdir|unlink|shred|del|erase|rd|remove-item|ri|format|format-volume|clear-disk|diskpart|mkfs(?:\.\w+)?|dd|reg|shutdown|reboot|halt|poweroff|stop-computer|restart-computer|git|chmod|chown|kill|killall|pkill|sudo|crontab|find)(?![\w-])/gi;
const ENGLISH_WORDS = new Set(['format', 'erase', 'halt', 'shutdown', 'reboot', 'find', 'kill', 'del', 'rd', 'reg', 'ri', 'dd']);
const COMMAND_LIKE_ARG = /^\s+(-{1,2}\w|\/\w|[A-Za-z]:|\S*[/\\~*.]\S*|delete\b|now\b|\+\d)/i;
/** Commands that only destroy: one of these that cannot be read as a command is held all the same. */
const DESTROYERS = new Set(['rm', 'rmdir', 'unlink', 'shred', 'del', 'erase', 'rd', 'remove-item', 'format', 'format-volume', 'clear-disk', 'diskpart', 'dd', 'shutdown', 'reboot', 'poweroff', 'stop-computer', 'restart-computer']);
/**
 * System places (seed 003 FR-006: "or a system path"): a text that names one is high whatever
 * it says of it, as the approval policy holds a command that writes there.
 */
const SYSTEM_PATH = /(?<![\w.~-])(\/(?:etc|usr|bin|sbin|boot|lib|lib64|sys|proc|root|dev\/(?:sd|nvme|disk)|var\/lib|System|Library)(?=[/\s'"`),;:]|$)|[A-Za-z]:\\(?:Windows|Program Files|ProgramData)(?=[\\\s'"`),;:]|$)|\\System32\b|~\/\.ssh\b|\bHK(?:LM|EY_LOCAL_MACHINE)\\)/i;
/** Line continuations of the three shell dialects, joined before the text is read line by line. */
const CONTINUATION = /(?:\\|`|\^)\r?\n[ \t]*/g;

/** Judges `text` for the worker whose context is `ctx`. */
export function judgeRisk(text: string, ctx: RiskContext): RiskJudgement {
  const joined = text.replace(CONTINUATION, ' ');
  const { commandLike, inSentences } = candidates(joined);
  if (commandLike.length + inSentences.length > MAX_CANDIDATES) {
    return { level: 'high', findings: [{ level: 'high', command: text.slice(0, 80), reason: `more than ${MAX_CANDIDATES} commands to judge in one text` }] };
  }
  const findings: RiskFinding[] = [];
  const judge = (command: string, mediumToo: boolean): void => {
    const verdict = evaluatePolicy(ctx.policy, { tool: 'shell', command, ...(ctx.dialect ? { shell: ctx.dialect } : {}) }, ctx);
    if (verdict.basis === 'blocklist' || verdict.decision === 'deny') findings.push({ level: 'high', command, reason: verdict.reason });
    else if (verdict.basis === 'unreadable' && DESTROYERS.has(commandWord(command))) findings.push({ level: 'high', command, reason: `a destructive command that cannot be read to the end (${verdict.reason})` });
    else if (mediumToo && verdict.decision === 'ask') findings.push({ level: 'medium', command, reason: verdict.reason });
  };
  for (const command of commandLike) judge(command, true);
  for (const command of inSentences) judge(command, false);
  const place = SYSTEM_PATH.exec(joined);
  if (place) findings.push({ level: 'high', command: place[0], reason: `it names a system location (${place[0]})` });
  const unique = [...new Map(findings.map((f) => [`${f.level}\n${f.command}`, f])).values()];
  unique.sort((a, b) => (a.level === b.level ? 0 : a.level === 'high' ? -1 : 1));
  return { level: unique[0]?.level ?? 'low', findings: unique };
}

/**
 * Where commands may be in the text: lines inside fenced blocks, inline code, `$ ` or `> ` lines
 * (judged for medium too); and quoted text and sentence tails from a command word, with the
 * backticks taken out so that code split around them reads whole (judged for high only).
 */
function candidates(text: string): { commandLike: string[]; inSentences: string[] } {
  const commandLike: string[] = [];
  const inSentences: string[] = [];
  let fenced = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (/^(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (line === '') continue;
    if (fenced) {
      commandLike.push(line.replace(/^[$>#]\s+/, ''));
      continue;
    }
    for (const span of line.matchAll(/`([^`]+)`/g)) if (span[1]) commandLike.push(span[1]);
    const prompted = /^[$>]\s+(.+)$/.exec(line);
    if (prompted?.[1]) commandLike.push(prompted[1]);
    const prose = line.replace(/`/g, '');
    for (const quoted of prose.matchAll(/"([^"]+)"|'([^']+)'|\u201c([^\u201d]+)\u201d|\u2018([^\u2019]+)\u2019/g)) {
      const inner = quoted[1] ?? quoted[2] ?? quoted[3] ?? quoted[4];
      if (inner) inSentences.push(inner);
    }
    for (const word of prose.matchAll(COMMAND_WORDS)) {
      const name = (word[1] ?? '').toLowerCase();
      const rest = prose.slice(word.index + word[0].length);
      if (ENGLISH_WORDS.has(name) && !COMMAND_LIKE_ARG.test(rest)) continue;
      // The tail up to the end of the sentence (a full stop, or a comma before a word that starts a
      // clause), and before a bracket or quote it did not open (`(rm -rf build)`, `$(rm -rf ~)`).
      const sentence = prose.slice(word.index).split(/(?<=\S)[.!?](?:\s|$)|,\s+(?:and|then|but)\s/i)[0] ?? '';
      inSentences.push(untilUnopened(sentence).slice(0, MAX_TAIL_CHARS).trim());
    }
  }
  return { commandLike, inSentences };
}

/** `text` up to the first closing bracket or quote it did not open. */
function untilUnopened(text: string): string {
  const open: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (c === '(' || c === '[' || c === '{') open.push(c);
    else if (c in pairs) {
      if (open.pop() !== pairs[c]) return text.slice(0, i);
    } else if (c === '"' || c === "'") {
      const end = text.indexOf(c, i + 1);
      if (end < 0) return text.slice(0, i);
      i = end;
    }
  }
  return text;
}

/** The first word of a command, as the blocklist names it. */
function commandWord(command: string): string {
  return (command.trim().split(/\s+/)[0] ?? '').replace(/^sudo$/, '').toLowerCase();
}
