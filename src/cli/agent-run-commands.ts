import { statSync } from 'node:fs';
import path from 'node:path';
import { SwitchboardError } from '../core/errors.js';
import { AgentCatalog, classifyScreen, parseApproval } from '../agents/index.js';
import { renderCapture } from '../pane/index.js';
import { switchboardHome } from '../platform/index.js';
import { CodingAgent, type ExecuteResult, type ProgressEvent } from '../drivers/pane/index.js';
import { loadPolicyFile, type ApprovalPolicy } from '../approvals/index.js';
import { intOption, parseCommandArgs, UsageError } from './args.js';
import { out, type CliContext } from './context.js';
import { errorResult, oneLine } from './failure.js';
import { readInput, taskArgument } from './task-input.js';

/** Builds the catalog, warning on stderr about the user's profiles that could not be used. */
export function loadCatalog(ctx: CliContext): AgentCatalog {
  const catalog = AgentCatalog.load({ home: ctx.home ?? switchboardHome(ctx.env), file: ctx.env.SWITCHBOARD_AGENTS });
  for (const problem of catalog.problems) ctx.stderr.write(`warning: skipped ${problem}\n`);
  return catalog;
}

/**
 * `detect --agent NAME [--version V] FILE|-`: classifies a saved screen capture (plain or with
 * ANSI) with the profile's patterns and prints the state as JSON, with the parsed approval request
 * and the evidence: how to check the detectors against a new CLI version.
 */
export async function detectCommand(ctx: CliContext, argv: string[]): Promise<number> {
  // --json is accepted for symmetry: the report is JSON anyway, and so are errors with it.
  const { values, positionals } = parseCommandArgs(argv, { agent: { type: 'string', short: 'a' }, version: { type: 'string' }, json: { type: 'boolean' } });
  const agent = values.agent as string | undefined;
  if (!agent) throw new UsageError('missing --agent NAME');
  const file = positionals[0];
  if (file === undefined) throw new UsageError('missing FILE (or - for standard input)');
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  const profile = loadCatalog(ctx).get(agent);
  const screens = profile.screensFor(values.version as string | undefined);
  const rows = renderCapture(await readInput(ctx, file));
  const result = classifyScreen(screens, rows);
  const approval = result.state === 'waiting_approval' ? parseApproval(screens, rows) : null;
  const report = {
    state: result.state ?? 'unknown',
    ...(approval ? { approval } : {}),
    ...(result.error !== undefined ? { error: result.error } : {}),
    ...(result.question !== undefined ? { question: result.question } : {}),
    ...(result.detection.dialog ? { dialog: result.detection.dialog.id } : {}),
    evidence: result.evidence,
  };
  out(ctx, JSON.stringify(report, null, 2));
  return 0;
}

function describeProgress(event: ProgressEvent): string | null {
  switch (event.type) {
    case 'started':
      return `started ${event.version ? `v${event.version} ` : ''}in pane ${event.paneId}`;
    case 'state': {
      const line = event.change.evidence?.line;
      return `${event.change.state}${line ? `  (${line.slice(0, 100)})` : ''}`;
    }
    case 'approval': {
      const a = event.approval;
      const what = a.request?.command ?? a.request?.path ?? a.request?.toolName ?? 'tool call';
      return `approval ${a.decision.toUpperCase()}: ${a.request?.tool ?? '?'} ${what} — ${a.reason}`;
    }
    case 'output':
      return null;
  }
}

const EXIT_BY_STATUS: Record<ExecuteResult['status'], number> = { completed: 0, error: 1, timeout: 2, cancelled: 130, needs_input: 3 };

/** What `exec --help` prints below the usage line. */
/** The result as `exec --json` prints it: failures also carry `error` with a stable code. */
function execJson(result: ExecuteResult): Record<string, unknown> {
  const failed = (result.status === 'error' || result.status === 'timeout') && result.errorCode !== null;
  return { ...result, ...(failed ? errorResult(result.errorCode ?? 'INTERNAL_ERROR', result.errorMessage ?? result.status) : {}), status: result.status };
}

/** The one stderr line of a task that did not complete. */
function outcomeLine(result: ExecuteResult): string {
  switch (result.status) {
    case 'completed':
      return '';
    case 'needs_input':
      return `switchboard exec: needs input: ${oneLine(result.question ?? 'the agent is waiting')}`;
    case 'timeout':
      return `switchboard exec: timed out: ${oneLine(result.errorMessage ?? '')}`;
    case 'cancelled':
      return 'switchboard exec: cancelled';
    case 'error':
      return `switchboard: ${oneLine(result.errorMessage ?? 'the agent failed')}`;
  }
}

/**
 * `exec AGENT TASK|- [--task-file F] [--workdir D] [--policy FILE | --auto-approve] [--timeout S]
 * [--json] [--quiet] [--agent-home DIR --model-url URL]`: drives the agent CLI through the task,
 * printing its state and approvals on stderr as they happen, then the result on stdout. Exit
 * status: 0 completed, 1 error, 2 timeout, 3 needs input, 130 cancelled. An error prints one line
 * on stderr and nothing on stdout (with --json, the JSON result).
 */
export async function execCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    workdir: { type: 'string', short: 'w' },
    'task-file': { type: 'string' },
    policy: { type: 'string' },
    'auto-approve': { type: 'boolean' },
    timeout: { type: 'string' },
    'idle-timeout': { type: 'string' },
    json: { type: 'boolean' },
    quiet: { type: 'boolean', short: 'q' },
    'agent-home': { type: 'string' },
    'model-url': { type: 'string' },
  });
  const [tool, ...taskWords] = positionals;
  if (tool === undefined) throw new UsageError('missing AGENT');
  if (values.policy !== undefined && values['auto-approve']) throw new UsageError('--policy and --auto-approve are exclusive');
  const agentHome = values['agent-home'] as string | undefined;
  const modelUrl = values['model-url'] as string | undefined;
  if ((agentHome === undefined) !== (modelUrl === undefined)) throw new UsageError('--agent-home and --model-url go together');
  const policy: ApprovalPolicy | boolean = values.policy !== undefined ? loadPolicyFile(path.resolve(values.policy as string)) : values['auto-approve'] === true;
  const timeoutS = intOption(values.timeout, 'timeout');
  const idleS = intOption(values['idle-timeout'], 'idle-timeout');
  const json = values.json === true;
  const workdir = path.resolve((values.workdir as string | undefined) ?? process.cwd());
  if (!statSync(workdir, { throwIfNoEntry: false })?.isDirectory()) throw new SwitchboardError('INVALID_PARAMS', `workdir ${workdir} is not a folder that exists`, { workdir });
  const catalog = loadCatalog(ctx);
  catalog.get(tool);
  const task = await taskArgument(ctx, taskWords, values['task-file'] as string | undefined);
  const quiet = values.quiet === true;
  const agent = new CodingAgent({
    tool,
    catalog,
    autoApprove: policy,
    ...(timeoutS !== undefined ? { timeoutMs: timeoutS * 1000 } : {}),
    ...(idleS !== undefined ? { idleTimeoutMs: idleS * 1000 } : {}),
    ...(agentHome !== undefined && modelUrl !== undefined ? { sandbox: { home: path.resolve(agentHome), modelUrl } } : {}),
    onProgress: (event) => {
      if (quiet) return;
      const line = describeProgress(event);
      if (line !== null) ctx.stderr.write(`[${new Date().toISOString().slice(11, 23)}] ${line}\n`);
    },
  });
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const result = await agent.execute(task, { workdir, signal: abort.signal });
    if (json) out(ctx, JSON.stringify(execJson(result), null, 2));
    // An error has no result to show: its line on stderr says it all.
    else if (result.status !== 'error') {
      out(ctx, `status: ${result.status} (${(result.durationMs / 1000).toFixed(1)} s)`);
      if (result.errorMessage) out(ctx, `error: ${result.errorMessage}`);
      if (result.question) out(ctx, `question: ${result.question}`);
      out(ctx, `files changed: ${result.filesChanged.length === 0 ? '(none)' : result.fileChanges.map((c) => `${c.path} (${c.change})`).join(', ')}`);
      for (const a of result.approvals) out(ctx, `approval: ${a.decision} ${a.request?.command ?? a.request?.path ?? '?'} — ${a.reason}`);
      if (result.finalMessage) out(ctx, `\n${result.finalMessage}`);
    }
    const line = outcomeLine(result);
    if (line !== '') ctx.stderr.write(`${line}\n`);
    return EXIT_BY_STATUS[result.status];
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await agent.dispose();
  }
}
