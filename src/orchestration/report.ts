/**
 * The team run's report (seed 003 FR-003/FR-103, issue 24 item 8): markdown with the goal, the
 * plan as the task list, each worker's outcome and what it changed, the checks run, what is still
 * open and how to verify, and the planner's own draft. Built from the run's record only, so the
 * same report comes out of a live run and of one read back from the ledger.
 */
import type { Task } from './task-list.js';
import type { TeamState } from './team-state.js';

interface ReportCheck {
  command: string;
  passed: boolean;
  /** The end of its output. */
  output: string;
}

interface ReportWorker {
  id: string;
  role: string;
  agent: string;
  state: string;
  folder: string;
  /** Files changed in the worker's folder (or its worktree), with the diff's stat line. */
  changes?: { files: readonly { path: string; change: string }[]; diffStat?: string; branch?: string; diff?: string };
  checks?: readonly ReportCheck[];
}

export interface TeamReportInput {
  goal: string;
  preset: string;
  state: TeamState;
  startedAt: string;
  endedAt?: string;
  /** The planner's run.complete summary, or a person's. */
  summary?: string;
  /** The planner's report draft (run.report_draft). */
  draft: string;
  tasks: readonly Task[];
  workers: readonly ReportWorker[];
}

/** Workers whose state leaves work open. */
const UNFINISHED = new Set(['error', 'stuck', 'needs_input', 'starting', 'running']);

/** The report as markdown. */
export function renderReport(r: TeamReportInput): string {
  const out: string[] = [`# Team run: ${oneLine(r.goal)}`, ''];
  out.push(`- Preset: ${r.preset}`, `- State: ${r.state}`, `- Started: ${r.startedAt}${r.endedAt ? `; ended: ${r.endedAt}` : ''}`, '');
  if (r.summary) out.push('## Summary', '', r.summary.trim(), '');
  out.push('## Plan', '');
  if (r.tasks.length === 0) out.push('No tasks were listed.', '');
  else {
    out.push('| task | title | owner | state | depends on |', '|---|---|---|---|---|');
    for (const t of r.tasks) out.push(`| ${t.id} | ${cell(t.title)} | ${t.owner ?? '—'} | ${t.state} | ${t.dependsOn.join(', ') || '—'} |`);
    out.push('');
  }
  out.push('## Workers', '');
  for (const w of r.workers) {
    out.push(`### ${w.id}: ${w.role} (${w.agent}), ${w.state}`, '', `Folder: \`${w.folder}\`${w.changes?.branch ? `, branch \`${w.changes.branch}\`` : ''}`, '');
    const files = w.changes?.files ?? [];
    if (files.length > 0) {
      out.push(`Changed${w.changes?.diffStat ? ` (${w.changes.diffStat})` : ''}:`, ...files.map((f) => `- ${f.change} \`${f.path}\``), '');
      if (w.changes?.diff) out.push(...fenced('diff', w.changes.diff), '');
    } else out.push('Changed no files.', '');
    for (const c of w.checks ?? []) out.push(`Check \`${c.command}\`: ${c.passed ? 'passed' : 'failed'}`, ...(c.passed || c.output.trim() === '' ? [] : ['', ...fenced('', c.output)]), '');
  }
  const open = openProblems(r);
  out.push('## Still open', '', ...(open.length > 0 ? open.map((p) => `- ${p}`) : ['Nothing.']), '');
  const checks = [...new Set(r.workers.flatMap((w) => (w.checks ?? []).map((c) => `(cd ${w.folder} && ${c.command})`)))];
  if (checks.length > 0) out.push('## How to verify', '', ...checks.map((c) => `- \`${c}\``), '');
  if (r.draft.trim() !== '') out.push("## The planner's draft", '', r.draft.trim(), '');
  return `${out.join('\n').trimEnd()}\n`;
}

function openProblems(r: TeamReportInput): string[] {
  const problems: string[] = [];
  for (const t of r.tasks) if (t.state !== 'done') problems.push(`${t.id} (${oneLine(t.title)}) is ${t.state}${t.owner ? ` with ${t.owner}` : ''}${t.failedCheck ? ': its check failed' : ''}`);
  for (const w of r.workers) {
    if (UNFINISHED.has(w.state)) problems.push(`${w.id} ended the run ${w.state.replace('_', ' ')}`);
    // The last run of its check says where it stands: a failure fixed since is no open problem.
    const last = w.checks?.at(-1);
    if (last && !last.passed) problems.push(`${w.id}: \`${last.command}\` failed`);
  }
  return problems;
}

/** `text` in a code block whose fence no run of backticks in it can close. */
function fenced(lang: string, text: string): string[] {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [`${fence}${lang}`, text.trimEnd(), fence];
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();
const cell = (text: string): string => oneLine(text).replace(/\|/g, '\\|');
