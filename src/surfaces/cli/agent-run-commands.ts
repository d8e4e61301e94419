import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AgentCatalog, classifyScreen, parseApproval } from '../../agents/index.js';
import { renderCapture } from '../../pane/index.js';
import { switchboardHome } from '../../platform/index.js';
import { CodingAgent, loadPolicyFile, type ApprovalPolicy, type ExecuteResult, type ProgressEvent } from '../../runs/index.js';
import { intOption, parseCommandArgs, UsageError } from './args.js';
import { out, type CliContext } from './context.js';

function loadCatalog(ctx: CliContext): AgentCatalog {
  const catalog = AgentCatalog.load({ home: ctx.home ?? switchboardHome(ctx.env), file: ctx.env.SWITCHBOARD_AGENTS });
  for (const problem of catalog.problems) ctx.stderr.write(`warning: skipped ${problem}\n`);
  return catalog;
}

async function readInput(ctx: CliContext, file: string): Promise<string> {
  if (file !== '-') return readFileSync(path.resolve(file), 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * `detect --agent NAME [--version V] FILE|-`: classifies a saved screen capture (plain or with
 * ANSI) with the profile's patterns and prints the state as JSON, with the parsed approval request
 * and the evidence: how to check the detectors against a new CLI version.
 */
export async function detectCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { agent: { type: 'string', short: 'a' }, version: { type: 'string' } });
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

/**
 * `exec AGENT "task" [--workdir D] [--policy FILE | --auto-approve] [--timeout S] [--json]
 * [--agent-home DIR --model-url URL]`: drives the agent CLI through the task, printing its state
 * and approvals as they happen, then the result. Exit status: 0 completed, 1 error, 2 timeout,
 * 3 needs input, 130 cancelled.
 */
export async function execCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    workdir: { type: 'string', short: 'w' },
    policy: { type: 'string' },
    'auto-approve': { type: 'boolean' },
    timeout: { type: 'string' },
    'idle-timeout': { type: 'string' },
    json: { type: 'boolean' },
    'agent-home': { type: 'string' },
    'model-url': { type: 'string' },
  });
  const [tool, ...taskWords] = positionals;
  if (tool === undefined) throw new UsageError('missing AGENT');
  const task = taskWords.join(' ');
  if (task.trim() === '') throw new UsageError('missing the task');
  if (values.policy !== undefined && values['auto-approve']) throw new UsageError('--policy and --auto-approve are exclusive');
  const agentHome = values['agent-home'] as string | undefined;
  const modelUrl = values['model-url'] as string | undefined;
  if ((agentHome === undefined) !== (modelUrl === undefined)) throw new UsageError('--agent-home and --model-url go together');
  const policy: ApprovalPolicy | boolean = values.policy !== undefined ? loadPolicyFile(path.resolve(values.policy as string)) : values['auto-approve'] === true;
  const timeoutS = intOption(values.timeout, 'timeout');
  const idleS = intOption(values['idle-timeout'], 'idle-timeout');
  const json = values.json === true;
  const agent = new CodingAgent({
    tool,
    catalog: loadCatalog(ctx),
    autoApprove: policy,
    ...(timeoutS !== undefined ? { timeoutMs: timeoutS * 1000 } : {}),
    ...(idleS !== undefined ? { idleTimeoutMs: idleS * 1000 } : {}),
    ...(agentHome !== undefined && modelUrl !== undefined ? { sandbox: { home: path.resolve(agentHome), modelUrl } } : {}),
    onProgress: (event) => {
      const line = describeProgress(event);
      if (line !== null) ctx.stderr.write(`[${new Date().toISOString().slice(11, 23)}] ${line}\n`);
    },
  });
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const result = await agent.execute(task, { workdir: path.resolve((values.workdir as string | undefined) ?? process.cwd()), signal: abort.signal });
    if (json) out(ctx, JSON.stringify(result, null, 2));
    else {
      out(ctx, `status: ${result.status} (${(result.durationMs / 1000).toFixed(1)} s)`);
      if (result.errorMessage) out(ctx, `error: ${result.errorMessage}`);
      if (result.question) out(ctx, `question: ${result.question}`);
      out(ctx, `files changed: ${result.filesChanged.length === 0 ? '(none)' : result.fileChanges.map((c) => `${c.path} (${c.change})`).join(', ')}`);
      for (const a of result.approvals) out(ctx, `approval: ${a.decision} ${a.request?.command ?? a.request?.path ?? '?'} — ${a.reason}`);
      if (result.finalMessage) out(ctx, `\n${result.finalMessage}`);
    }
    return EXIT_BY_STATUS[result.status];
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await agent.dispose();
  }
}
