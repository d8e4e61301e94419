/**
 * `switchboard team run|runs|board|answer|send|resend|restart|mark|pause|resume|end|report|record`: seed 003's team runs
 * from the command line. Everything goes through the daemon, so the board here is the same as the
 * dashboard's, live: it waits on the board's version and draws it again on every change. On a
 * terminal the board also takes keys: a/d let the held text through or not, p pauses or resumes,
 * q leaves (the run goes on).
 */
import path from 'node:path';
import type { SwitchboardClient } from '../client/index.js';
import type { TeamBoardInfo } from '../protocol/methods.js';
import { parseCommandArgs, UsageError } from './args.js';
import { out, withClient, type CliContext } from './context.js';
import { table } from './format.js';

/** How long one board watch waits before it draws again anyway (a worker's last lines move without a change). */
const BOARD_REFRESH_MS = 2_000;
/** A worker's last lines the board shows. */
const BOARD_LINES = 3;
const ENDED = new Set(['completed', 'failed', 'cancelled']);

/** The run subcommands, by name; undefined when `what` is none of them. */
export function teamRunSubcommand(what: string): ((ctx: CliContext, argv: string[]) => Promise<number>) | undefined {
  switch (what) {
    case 'run':
      return runCommand;
    case 'runs':
      return runsCommand;
    case 'board':
      return boardCommand;
    case 'answer':
      return answerCommand;
    case 'send':
      return sendCommand;
    case 'mark':
      return markCommand;
    case 'pause':
    case 'resume':
    case 'end':
      return (ctx, argv) => controlCommand(ctx, what, argv);
    case 'report':
      return reportCommand;
    case 'record':
      return recordCommand;
    case 'resend':
      return resendCommand;
    case 'restart':
      return restartCommand;
    default:
      return undefined;
  }
}

async function runCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { preset: { type: 'string' }, folder: { type: 'string' }, board: { type: 'boolean' }, markers: { type: 'boolean' }, json: { type: 'boolean' } });
  const goal = positionals.join(' ').trim();
  if (typeof values.preset !== 'string') throw new UsageError('team run needs --preset NAME');
  if (goal === '') throw new UsageError('team run needs the goal, in quotes: team run --preset NAME "the goal"');
  const folder = path.resolve(typeof values.folder === 'string' ? values.folder : process.cwd());
  const client = await ctx.connect();
  try {
    const board = await client.teamRunStart({ preset: values.preset, goal, folder, ...(values.markers === true ? { planner_calls: 'markers' as const } : {}) });
    if (values.json === true) out(ctx, JSON.stringify(board));
    else out(ctx, `${board.run_id}: ${board.preset} on "${board.goal}" in ${folder}; watch it with: switchboard team board ${board.run_id}`);
    return values.board === true ? await followBoard(ctx, client, board.run_id) : 0;
  } finally {
    client.close();
  }
}

async function runsCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const { runs } = await withClient(ctx, (c) => c.teamRunList());
  if (values.json === true) out(ctx, JSON.stringify(runs));
  else out(ctx, table(['RUN', 'STATE', 'PRESET', 'WORKERS', 'STARTED', 'GOAL'], runs.map((r) => [r.run_id, r.state, r.preset, String(r.workers), r.started_at, r.goal.length > 50 ? `${r.goal.slice(0, 49)}…` : r.goal])));
  return 0;
}

async function boardCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { once: { type: 'boolean' }, json: { type: 'boolean' } });
  const runId = onlyRunId(positionals, 'team board RUN');
  const client = await ctx.connect();
  try {
    if (values.once === true || values.json === true) {
      const board = await client.teamRunGet(runId);
      out(ctx, values.json === true ? JSON.stringify(board) : renderBoard(board));
      return 0;
    }
    return await followBoard(ctx, client, runId);
  } finally {
    client.close();
  }
}

async function answerCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { positionals } = parseCommandArgs(argv, {});
  const [runId, confirmationId, decision, extra] = positionals;
  if (runId === undefined || confirmationId === undefined || (decision !== 'allow' && decision !== 'deny') || extra !== undefined) throw new UsageError('usage: team answer RUN CONFIRMATION allow|deny');
  await withClient(ctx, (c) => c.teamRunAnswer(runId, confirmationId, decision));
  out(ctx, `${confirmationId}: ${decision === 'allow' ? 'let through' : 'denied'}`);
  return 0;
}

async function restartCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { positionals } = parseCommandArgs(argv, {});
  const [runId, workerId, extra] = positionals;
  if (runId === undefined || workerId === undefined || extra !== undefined) throw new UsageError('usage: team restart RUN WORKER');
  const result = await withClient(ctx, (c) => c.teamRunRestart(runId, workerId));
  out(ctx, `${result.worker_id}: restarted, ${result.state}`);
  return 0;
}

async function resendCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { positionals } = parseCommandArgs(argv, {});
  const [runId, callId, extra] = positionals;
  if (runId === undefined || callId === undefined || extra !== undefined) throw new UsageError('usage: team resend RUN CALL');
  await withClient(ctx, (c) => c.teamRunResend(runId, callId));
  out(ctx, `${callId}: queued for the planner again`);
  return 0;
}

async function sendCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { worker: { type: 'string' }, confirmed: { type: 'boolean' } });
  const [runId, ...words] = positionals;
  const text = words.join(' ');
  if (runId === undefined || text.trim() === '') throw new UsageError('usage: team send RUN [--worker ID] [--confirmed] "text"');
  const sent = await withClient(ctx, (c) => c.teamRunSend(runId, text, { ...(typeof values.worker === 'string' ? { workerId: values.worker } : {}), confirmed: values.confirmed === true }));
  if (sent.held) {
    const finding = sent.judgement.findings[0];
    ctx.stderr.write(`switchboard: held, nothing sent: ${sent.judgement.level} risk${finding ? ` (${finding.command}: ${finding.reason})` : ''}; send it again with --confirmed to let it through\n`);
    return 1;
  }
  out(ctx, `sent to ${sent.sent.join(', ')}`);
  return 0;
}

async function markCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { positionals } = parseCommandArgs(argv, {});
  const [runId, workerId, mark, extra] = positionals;
  const marks = { done: 'completed', blocked: 'stuck', 'needs-input': 'needs_input', clear: null } as const;
  if (runId === undefined || workerId === undefined || mark === undefined || !Object.hasOwn(marks, mark) || extra !== undefined) throw new UsageError('usage: team mark RUN WORKER done|blocked|needs-input|clear');
  const marked = await withClient(ctx, (c) => c.teamRunMark(runId, workerId, marks[mark as keyof typeof marks]));
  out(ctx, `${marked.worker_id}: ${marked.state}`);
  return 0;
}

async function controlCommand(ctx: CliContext, what: 'pause' | 'resume' | 'end', argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { 'close-agents': { type: 'boolean' } });
  const runId = onlyRunId(positionals, `team ${what} RUN${what === 'end' ? ' [--close-agents]' : ''}`);
  if (what !== 'end' && values['close-agents'] === true) throw new UsageError('--close-agents goes with team end');
  const result = await withClient(ctx, (c) => (what === 'pause' ? c.teamRunPause(runId) : what === 'resume' ? c.teamRunResume(runId) : c.teamRunEnd(runId, { closeAgents: values['close-agents'] === true })));
  out(ctx, `${result.run_id}: ${result.state}`);
  return 0;
}

async function reportCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { positionals } = parseCommandArgs(argv, {});
  const runId = onlyRunId(positionals, 'team report RUN');
  ctx.stdout.write((await withClient(ctx, (c) => c.teamRunReport(runId))).markdown);
  return 0;
}

/** The run's record, every page of it: a line an entry, or a JSON object a line with --json. */
async function recordCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean' } });
  const runId = onlyRunId(positionals, 'team record RUN [--json]');
  await withClient(ctx, async (c) => {
    let after = 0;
    for (;;) {
      const page = await c.teamRunEvents(runId, { afterSeq: after });
      for (const entry of page.entries) out(ctx, values.json === true ? JSON.stringify(entry) : recordLine(entry));
      if (page.next_after === null) return;
      after = page.next_after;
    }
  });
  return 0;
}

/** One entry of a run's record as a line: its number, time, kind and what it says. */
function recordLine(entry: { seq: number; ts: number; kind: string } & Record<string, unknown>): string {
  const e = (key: string): string => (typeof entry[key] === 'string' ? entry[key] : JSON.stringify(entry[key] ?? null));
  const what = ((): string => {
    switch (entry.kind) {
      case 'state':
        return `${e('from')} -> ${e('to')}: ${e('why')}`;
      case 'worker':
        return `${e('worker')} (${e('role')}, ${e('agent')}) in ${e('folder')}${entry.failed !== undefined ? `: could not start: ${e('failed')}` : ''}`;
      case 'call':
        return `${e('by')} ${e('method')} ${JSON.stringify(entry.params ?? {})} via ${e('via')}: ${e('outcome')}${entry.message !== undefined ? ` (${e('message')})` : ''}`;
      case 'delivery':
        return `${e('call')}: ${e('delivered')}`;
      case 'decision':
        return `${e('member')}: ${e('what')} -> ${e('decision')} by ${e('by')}`;
      case 'held':
        return `${e('confirmation')} for ${e('worker')} (${e('level')}): ${e('text')}`;
      case 'answer':
        return `${e('confirmation')}: ${e('decision')} by ${e('by')}`;
      case 'send':
        return `${e('by')} to ${(entry.workers as string[] | undefined)?.join(', ') ?? ''} (${e('level')}${entry.held === true ? ', held' : ''}): ${e('text')}`;
      case 'mark':
        return `${e('worker')} marked ${e('mark')} by ${e('by')}`;
      case 'stuck':
        return `${e('worker')}: ${e('why')}`;
      case 'moving':
        return `${e('worker')} moves again`;
      case 'nudge':
        return `${e('worker')}: ${e('text')}`;
      case 'restart':
      case 'resend':
        return `${e(entry.kind === 'restart' ? 'worker' : 'call')} by ${e('by')}`;
      case 'check':
        return `${e('worker')} ${e('task')}: \`${e('command')}\` ${entry.passed === true ? 'passed' : `failed (exit ${e('exitCode')})`} in ${e('ms')} ms`;
      case 'worktree':
        if (entry.removed !== true) return `${e('worker')}: ${e('branch')} kept at ${e('path')}`;
        return `${e('worker')}: worktree removed (nothing changed)${entry.branchRemoved === true ? `, branch ${e('branch')} too` : `; branch ${e('branch')} kept (git does not see it merged)`}`;
      default:
        return JSON.stringify(entry);
    }
  })();
  // Agents' and people's text, shown on a terminal: no control characters (an escape sequence in it would act).
  return `${String(entry.seq).padStart(4)}  ${new Date(entry.ts).toISOString()}  ${entry.kind.padEnd(8)}  ${what.replace(/\s*\n\s*/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '')}`;
}

function onlyRunId(positionals: string[], usage: string): string {
  const [runId, extra] = positionals;
  if (runId === undefined || extra !== undefined) throw new UsageError(`usage: ${usage}`);
  return runId;
}

/**
 * Draws the board on every change until the run ends (0) or the person leaves with q (0); on a
 * terminal, keys act on it. Not a terminal: each board is printed in turn, for a log.
 */
async function followBoard(ctx: CliContext, client: SwitchboardClient, runId: string): Promise<number> {
  const terminal = ctx.stdout.isTTY;
  const keys = terminal && ctx.stdin.isTTY ? boardKeys(ctx, client, runId) : undefined;
  try {
    let board = await client.teamRunGet(runId);
    for (;;) {
      if (terminal) ctx.stdout.write('\x1b[H\x1b[2J');
      out(ctx, renderBoard(board, keys !== undefined));
      if (ENDED.has(board.state) || keys?.left()) return 0;
      const next = await Promise.race([client.teamRunGet(runId, { afterVersion: board.version, waitMs: BOARD_REFRESH_MS }), keys?.quit ?? new Promise<never>(() => undefined)]);
      if (next === 'quit') return 0;
      board = next;
    }
  } finally {
    keys?.dispose();
  }
}

/** The board's keys on a terminal: a/d answer the first held text, p pauses or resumes, q leaves. */
function boardKeys(ctx: CliContext, client: SwitchboardClient, runId: string): { quit: Promise<'quit'>; left: () => boolean; dispose: () => void } {
  const stdin = ctx.stdin;
  let leave: (() => void) | undefined;
  let gone = false;
  const quit = new Promise<'quit'>((resolve) => {
    leave = () => {
      gone = true;
      resolve('quit');
    };
  });
  const act = async (key: string): Promise<void> => {
    if (key === 'q' || key === '\x03') return leave?.();
    const board = await client.teamRunGet(runId);
    const held = board.confirmations[0];
    if ((key === 'a' || key === 'd') && held) await client.teamRunAnswer(runId, held.id, key === 'a' ? 'allow' : 'deny');
    if (key === 'p') await (board.state === 'paused' ? client.teamRunResume(runId) : client.teamRunPause(runId));
  };
  const onData = (data: Buffer): void => {
    void act(data.toString('utf8')).catch((err: unknown) => ctx.stderr.write(`switchboard: ${err instanceof Error ? err.message : String(err)}\n`));
  };
  stdin.setRawMode(true);
  stdin.on('data', onData);
  return {
    quit,
    left: () => gone,
    dispose: () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
    },
  };
}

/** The board as text: the run, the plan and the next step, each worker, what waits for a person. */
function renderBoard(board: TeamBoardInfo, withKeys = false): string {
  const lines = [`${board.run_id}  ${board.state} (${board.why})  preset ${board.preset}`, `goal: ${board.goal}`, ''];
  lines.push(`planner  ${board.planner.role} (${board.planner.agent})  ${board.planner.state}`);
  if (board.tasks.length > 0) {
    lines.push('', 'plan:');
    for (const task of board.tasks) lines.push(`  ${task.state === 'done' ? '[x]' : task.state === 'claimed' ? '[~]' : '[ ]'} ${task.id} ${task.title}${task.owner ? `  (${task.owner})` : ''}${task.depends_on.length > 0 ? `  after ${task.depends_on.join(', ')}` : ''}${task.failed_check !== null ? '  (its check failed)' : ''}`);
  }
  lines.push(`next: ${board.next_step ?? '—'}`, '');
  // A worktree's branch and a check's last result, in columns only for a team that has them.
  const branches = board.workers.some((w) => w.branch !== null);
  const checks = board.workers.some((w) => w.last_check !== null);
  const header = ['WORKER', 'AGENT', 'STATE', 'FOLDER', ...(branches ? ['BRANCH'] : []), ...(checks ? ['CHECK'] : [])];
  const rows = board.workers.map((w) => [
    w.id,
    w.agent,
    w.state,
    w.folder,
    ...(branches ? [w.branch === null ? '' : `${w.branch} (${w.changed_files ?? 0} changed)`] : []),
    ...(checks ? [w.last_check === null ? '' : `${w.last_check.passed ? 'passed' : 'FAILED'}: ${w.last_check.command}`] : []),
  ]);
  lines.push(table(header, rows));
  for (const worker of board.workers) {
    const last = worker.last_lines.filter((l) => l.trim() !== '').slice(-BOARD_LINES);
    if (last.length > 0) lines.push(`  ${worker.id}:`, ...last.map((l) => `    ${l}`));
  }
  // Once the run has ended nothing more is typed into the planner, and nothing can be resent.
  const unsent = ENDED.has(board.state) ? [] : board.calls.filter((c) => c.delivered === 'undelivered' || c.delivered === 'unconfirmed');
  if (unsent.length > 0) {
    lines.push('', `not confirmed at the planner: ${unsent.map((c) => `${c.id} (${c.method}, ${c.delivered})`).join(', ')}`);
    if (unsent.some((c) => c.via === 'markers')) lines.push(`  resend: switchboard team resend ${board.run_id} CALL`);
  }
  for (const held of board.confirmations) {
    const finding = held.judgement.findings[0];
    lines.push('', `HELD ${held.id} for ${held.worker_id}: ${held.text}`, `  ${held.judgement.level} risk${finding ? `: ${finding.command}: ${finding.reason}` : ''}`);
    lines.push(withKeys ? '  a: let it through   d: deny' : `  answer: switchboard team answer ${board.run_id} ${held.id} allow|deny`);
  }
  if (board.summary) lines.push('', `summary: ${board.summary}`);
  if (withKeys) lines.push('', 'p: pause/resume   q: leave the board (the run goes on)');
  return lines.join('\n');
}
