/**
 * The agent bridge from the command line, through the daemon: `switchboard run BACKEND PROMPT|-`
 * submits a run and follows its events to the end (Ctrl-C cancels it and still waits for its end),
 * and `switchboard runs` lists runs, shows one with its events from the ledger, follows or cancels
 * one. With --json every event is one JSON line (schema v2) and the run itself is the last line.
 */
import path from 'node:path';
import { isRunEnded, type RunEventInfo, type RunViewInfo } from '../protocol/methods.js';
import type { SwitchboardClient } from '../client/index.js';
import { intOption, parseCommandArgs, UsageError } from './args.js';
import { out, withClient, type CliContext } from './context.js';
import { table } from './format.js';
import { taskArgument } from './task-input.js';

/** How often the progress line is redrawn, in ms. */
const PROGRESS_MS = 500;

/**
 * The line at the bottom of a terminal that says how a run is doing (its state, how long, how many
 * events) while it works; only when stderr is a terminal and words are printed. Every other line
 * is written through `print`, which clears the progress line first and redraws it after.
 */
class ProgressLine {
  private status = 'queued';
  private events = 0;
  private readonly since = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private shown = false;

  constructor(private readonly stream: NodeJS.WriteStream) {
    this.timer = setInterval(() => this.draw(), PROGRESS_MS);
    this.timer.unref();
  }

  static for(ctx: CliContext, options: { json: boolean; quiet: boolean }): ProgressLine | undefined {
    return ctx.stderr.isTTY && !options.json && !options.quiet ? new ProgressLine(ctx.stderr) : undefined;
  }

  /** Counts an event (a state change updates the status shown). */
  saw(event: RunEventInfo): void {
    this.events++;
    if (event.type === 'state') this.status = event.schema_version === 'v2' ? event.compat.status : event.status;
  }

  /** Writes `text` above the progress line. */
  print(target: NodeJS.WritableStream, text: string): void {
    this.clear();
    target.write(text);
    this.draw();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }

  private draw(): void {
    if (this.timer === undefined) return;
    const seconds = Math.round((Date.now() - this.since) / 1000);
    this.stream.write(`\r\x1b[K… ${this.status} · ${seconds} s · ${this.events} event${this.events === 1 ? '' : 's'}`);
    this.shown = true;
  }

  private clear(): void {
    if (!this.shown) return;
    this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}

/** Exit codes of a run that was followed to its end. */
export const RUN_EXIT = { completed: 0, failed: 1, timeout: 2, cancelled: 130 } as const;

const RUN_OPTIONS = {
  cwd: { type: 'string' },
  mode: { type: 'string' },
  parent: { type: 'string' },
  'no-keep-alive': { type: 'boolean' },
  detach: { type: 'boolean' },
  follow: { type: 'boolean' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean' },
  'wall-clock': { type: 'string' },
  'no-output': { type: 'string' },
  labels: { type: 'string' },
  node: { type: 'string' },
  resume: { type: 'string' },
  repo: { type: 'string' },
  ref: { type: 'string' },
  push: { type: 'boolean' },
} as const;

/** `run BACKEND PROMPT|- [options]` */
export async function runCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, RUN_OPTIONS);
  const backend = positionals[0];
  if (backend === undefined) throw new UsageError('missing BACKEND (see `switchboard run --help`; `switchboard runs backends` lists them)');
  const prompt = await taskArgument(ctx, positionals.slice(1), undefined);
  const mode = values.mode as string | undefined;
  if (mode !== undefined && mode !== 'auto' && mode !== 'stdio' && mode !== 'pty') throw new UsageError('--mode must be auto, stdio or pty');
  if (values.detach && values.follow) throw new UsageError('--detach and --follow do not go together');
  const wall = intOption(values['wall-clock'], 'wall-clock');
  const silent = intOption(values['no-output'], 'no-output');
  const limits = wall !== undefined || silent !== undefined ? { ...(wall !== undefined ? { wall_clock_ms: wall * 1000 } : {}), ...(silent !== undefined ? { no_output_ms: silent * 1000 } : {}) } : undefined;
  const resume = values.resume as string | undefined;
  if (resume !== undefined && values.parent !== undefined) throw new UsageError('--resume and --parent do not go together: --parent follows up an open conversation, --resume starts its CLI again on it');
  // A follow-up or a resumed run works in its run's folder (on a cluster node, the node's): the caller's only when named.
  const given = values.cwd as string | undefined;
  const repo = values.repo as string | undefined;
  if (repo === undefined && values.ref !== undefined) throw new UsageError('--ref goes with --repo');
  // A follow-up or a resume of a repository run goes on on its branch, and may ask for the push it did not.
  if (repo === undefined && values.push !== undefined && resume === undefined && values.parent === undefined) throw new UsageError('--push goes with --repo, --parent or --resume');
  // With a repository, the folder is one inside the run's worktree on its node, as given.
  const cwd = repo !== undefined ? given : given !== undefined ? path.resolve(given) : resume === undefined && values.parent === undefined ? process.cwd() : undefined;
  const labels = labelsOption(values.labels as string | undefined);
  const node = values.node as string | undefined;
  return withClient(ctx, async (client) => {
    const { run } = await client.runSubmit({ backend, prompt, cwd, mode, parent: values.parent as string | undefined, ...(values['no-keep-alive'] === true ? { keep_alive: false } : {}), limits, ...(labels ? { labels } : {}), ...(node !== undefined ? { node } : {}), ...(resume !== undefined ? { resume } : {}), ...(repo !== undefined ? { repo, ...(values.ref !== undefined ? { ref: values.ref as string } : {}) } : {}), ...(values.push === true ? { push: true } : {}) });
    if (values.detach) {
      out(ctx, values.json ? JSON.stringify({ run }) : run.id);
      return 0;
    }
    if (!values.json && !values.quiet) ctx.stderr.write(`run ${run.id} on ${run.backend} (${run.mode}), ${run.status}${run.queue_position !== null ? `, ${run.queue_position} ahead in line` : ''}\n`);
    return follow(ctx, client, run.id, 0, { json: values.json === true, quiet: values.quiet === true, cancelOnInterrupt: true });
  });
}

/**
 * Follows a run from event `after` to its end, printing each event; resolves with the exit code of
 * how it ended. With `cancelOnInterrupt`, the first Ctrl-C cancels the run (a second one leaves).
 */
async function follow(ctx: CliContext, client: SwitchboardClient, runId: string, after: number, options: { json: boolean; quiet: boolean; cancelOnInterrupt: boolean }): Promise<number> {
  let interrupts = 0;
  const onInterrupt = (): void => {
    interrupts += 1;
    if (interrupts > 1) process.exit(RUN_EXIT.cancelled);
    if (!options.json) ctx.stderr.write(`cancelling ${runId}…\n`);
    void client.runCancel(runId).catch((err: unknown) => ctx.stderr.write(`switchboard: could not cancel: ${(err as Error).message}\n`));
  };
  if (options.cancelOnInterrupt) process.on('SIGINT', onInterrupt);
  const progress = ProgressLine.for(ctx, options);
  const reply: ReplyLine = { open: false };
  try {
    const ended = await new Promise<{ reason: 'ended' | 'error'; message?: string | undefined }>((resolve, reject) => {
      client.onClose((err) => reject(err ?? new Error('the connection to the daemon closed')));
      client
        .runSubscribe(runId, { after, schemaVersion: 'v2' }, { run_event: (n) => printEvent(ctx, n.event, options, reply, progress), run_stream_end: (n) => resolve({ reason: n.reason, message: n.message }) })
        .catch(reject);
    });
    endReplyLine(ctx, reply, progress);
    progress?.stop();
    if (ended.reason === 'error') ctx.stderr.write(`switchboard: following the run stopped: ${ended.message ?? 'unknown error'}\n`);
    const { run } = await client.runGet(runId);
    if (options.json) out(ctx, JSON.stringify({ run }));
    else if (!options.quiet) ctx.stderr.write(`${describeEnd(run)}\n`);
    return exitCodeOf(run);
  } finally {
    progress?.stop();
    if (options.cancelOnInterrupt) process.off('SIGINT', onInterrupt);
  }
}

/** The exit code for how a run ended (or 1 when it has not). */
export function exitCodeOf(run: RunViewInfo): number {
  if (run.status === 'completed') return RUN_EXIT.completed;
  if (run.status === 'cancelled') return RUN_EXIT.cancelled;
  if (run.status === 'failed' && (run.reason === 'timeout' || run.reason === 'no_output_timeout')) return RUN_EXIT.timeout;
  return RUN_EXIT.failed;
}

function describeEnd(run: RunViewInfo): string {
  const took = run.started_at !== null && run.ended_at !== null ? ` in ${((run.ended_at - run.started_at) / 1000).toFixed(1)} s` : '';
  return `run ${run.id} ${run.status}${run.reason !== null ? ` (${run.reason})` : ''}${took}${run.status !== 'completed' && run.message !== '' ? `: ${run.message}` : ''}`;
}

/**
 * Where the agent's text stands on stdout: a reply streams in many token events, written as they
 * come, and its line is ended only when something else happens (a tool call, the end of the run).
 */
interface ReplyLine {
  open: boolean;
}

/** Ends the agent's line on stdout if a reply left it open. */
function endReplyLine(ctx: CliContext, reply: ReplyLine, progress?: ProgressLine): void {
  if (!reply.open) return;
  reply.open = false;
  if (progress) progress.print(ctx.stdout, '\n');
  else ctx.stdout.write('\n');
}

/** One event: the agent's text as it streams, everything else as a line marked by its type. */
function printEvent(ctx: CliContext, event: RunEventInfo, options: { json: boolean; quiet: boolean }, reply: ReplyLine, progress?: ProgressLine): void {
  if (options.json) {
    out(ctx, JSON.stringify(event));
    return;
  }
  progress?.saw(event);
  const write = (target: NodeJS.WritableStream, text: string): void => {
    if (progress) progress.print(target, text);
    else target.write(text);
  };
  const text = event.schema_version === 'v2' ? event.compat.text : event.text;
  const status = event.schema_version === 'v2' ? event.compat.status : event.status;
  if (event.type === 'token') {
    if (text === '') return;
    write(ctx.stdout, text);
    reply.open = !text.endsWith('\n');
    return;
  }
  endReplyLine(ctx, reply, progress);
  if (options.quiet) return;
  const line = (mark: string, body: string): void => {
    write(ctx.stderr, `${mark} ${body.replace(/\s+/g, ' ').slice(0, 300)}\n`);
  };
  const data = event.schema_version === 'v2' ? event.data : {};
  switch (event.type) {
    case 'state':
      line('·', `${typeof data.from === 'string' ? data.from : ''} → ${status}${typeof data.reason === 'string' ? ` (${data.reason})` : ''}`);
      break;
    case 'tool_call':
      line('▸', text);
      break;
    case 'tool_result':
      line('◂', `${status}${text !== '' ? `: ${text}` : ''}`);
      break;
    case 'patch':
      line('±', text);
      break;
    case 'decision':
      line('§', `${status} by ${typeof data.rule === 'string' ? data.rule : '?'}: ${text}`);
      break;
    case 'error':
      line('!', text);
      break;
    case 'notice':
      line('i', text);
      break;
    case 'input':
    case 'output':
    case 'done':
      break;
  }
}

const RUNS_OPTIONS = {
  json: { type: 'boolean' },
  status: { type: 'string' },
  backend: { type: 'string' },
  limit: { type: 'string' },
  after: { type: 'string' },
  follow: { type: 'boolean' },
  quiet: { type: 'boolean' },
} as const;

/** `--labels a,b`: the labels a cluster node must have (a controller's runs); empty names are a usage error. */
function labelsOption(given: string | undefined): string[] | undefined {
  if (given === undefined) return undefined;
  const labels = given.split(',').map((l) => l.trim());
  if (labels.some((l) => l === '')) throw new UsageError('--labels takes names separated by commas, none empty');
  return labels;
}

/**
 * `runs [--status S] [--backend B] [--limit N] [--json]`: the runs, newest first.
 * `runs [show] ID [--after N] [--follow] [--json]`: one run and its events from the ledger (a replay),
 * or followed live to its end. `runs cancel ID`. `runs backends`: each backend's health. `runs nodes`:
 * the cluster's live nodes (a controller's).
 */
export async function runsCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, RUNS_OPTIONS);
  const json = values.json === true;
  const [first, second, extra] = positionals;
  if (extra !== undefined) throw new UsageError(`unexpected argument '${extra}'`);
  return withClient(ctx, async (client) => {
    if (first === undefined) {
      const status = values.status as RunViewInfo['status'] | undefined;
      // Prompts come as previews (their first KiB): `runs show ID` has the whole prompt.
      const { runs, next_before: nextBefore } = await client.runList({ status, backend: values.backend as string | undefined, limit: intOption(values.limit, 'limit') });
      if (json) out(ctx, JSON.stringify({ runs, next_before: nextBefore }));
      else out(ctx, runsTable(runs));
      return 0;
    }
    if (first === 'backends') {
      const result = await client.runBackends();
      if (json) out(ctx, JSON.stringify(result));
      else {
        out(ctx, table(['BACKEND', 'MODES', 'OK', 'VERSION', 'IDLE', 'PROBLEM'], result.backends.map((b) => [b.name, b.modes.join(','), b.health.ok === true ? 'yes' : 'no', typeof b.health.version === 'string' ? b.health.version : '-', `${b.idle.conversations}`, typeof b.health.problem === 'string' ? b.health.problem : ''])));
        const idle = result.idle;
        out(ctx, `idle conversations kept for follow-ups: ${idle.conversations} of at most ${idle.max} (${idle.processes} processes), each for ${Math.round(idle.idle_ms / 1000)} s after its last run`);
      }
      return 0;
    }
    if (first === 'nodes') {
      const result = await client.runNodes();
      if (json) out(ctx, JSON.stringify(result));
      else if (!result.cluster) out(ctx, 'this daemon has no cluster: its runs run here (`switchboard up --cluster nats://…` makes it a controller)');
      else if (result.nodes.length === 0) out(ctx, 'no node is live in the cluster');
      else out(ctx, table(['NODE', 'LABELS', 'BACKENDS', 'REPOS', 'SLOTS FREE'], result.nodes.map((n) => [n.name, n.labels.join(',') || '-', n.clis.map((c) => (c.version !== '' ? `${c.name} ${c.version}` : c.name)).join(', ') || '-', n.repos.join(',') || '-', `${n.slots.free} of ${n.slots.total}`])));
      return 0;
    }
    if (first === 'cancel' || first === 'interrupt') {
      if (second === undefined) throw new UsageError(`missing the run id to ${first}`);
      const { run } = first === 'cancel' ? await client.runCancel(second) : await client.runInterrupt(second);
      // A cluster node's run ends on its node: the answer comes once the node was told.
      const told = `${first} sent to node ${run.node ?? '?'}: run ${run.id} is ${run.status} until its node ends it (switchboard runs ${run.id} --follow)`;
      out(ctx, json ? JSON.stringify({ run }) : isRunEnded(run.status) || run.node === undefined ? describeEnd(run) : told);
      return 0;
    }
    const id = first === 'show' ? second : first;
    if (id === undefined) throw new UsageError('missing the run id to show');
    if (first !== 'show' && second !== undefined) throw new UsageError(`unexpected argument '${second}'`);
    const after = intOption(values.after, 'after') ?? 0;
    if (values.follow) return follow(ctx, client, id, after, { json, quiet: values.quiet === true, cancelOnInterrupt: false });
    const replay = await client.runEvents(id, { after, limit: 10_000, schemaVersion: 'v2' });
    if (json) {
      out(ctx, JSON.stringify({ run: replay.run, events: replay.events }));
      return 0;
    }
    const r = replay.run;
    out(ctx, `${r.id}  ${r.backend} (${r.mode})  ${r.status}${r.reason !== null ? ` (${r.reason})` : ''}\n  cwd: ${r.cwd}\n  prompt: ${oneLinePrompt(r.prompt)}\n  policy: ${r.policy}${r.parent !== null ? `\n  follows: ${r.parent}` : ''}`);
    const reply: ReplyLine = { open: false };
    for (const e of replay.events) printEvent(ctx, e, { json: false, quiet: false }, reply);
    endReplyLine(ctx, reply);
    return 0;
  });
}

function oneLinePrompt(prompt: string): string {
  const line = prompt.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function runsTable(runs: RunViewInfo[]): string {
  return table(
    ['ID', 'BACKEND', 'MODE', 'STATUS', 'CREATED', 'PROMPT'],
    runs.map((r) => [r.id, r.backend, r.mode, `${r.status}${r.reason !== null && r.status !== 'completed' ? ` (${r.reason})` : ''}`, new Date(r.created_at).toISOString().replace('T', ' ').slice(0, 19), oneLinePrompt(r.prompt).slice(0, 40)]),
  );
}
