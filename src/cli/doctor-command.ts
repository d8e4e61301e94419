import { UNREAD_SCREEN_MS, runDoctor, type AgentReport, type DoctorReport, type StepReport } from '../doctor/index.js';
import { intOption, parseCommandArgs, UsageError } from './args.js';
import { out, type CliContext } from './context.js';
import { loadCatalog } from './agent-run-commands.js';
import { EXIT_ERROR } from './failure.js';

/** What `doctor --help` prints below the usage line. */
const STEP_NAMES: Record<StepReport['step'], string> = { start: 'start', prompt: 'prompt', long_prompt: 'long prompt', approval: 'approval', idle: 'back to idle' };
const MARK = { pass: '✓', fail: '✗', not_found: '-' } as const;

function seconds(ms: number | null): string {
  return ms === null ? '' : `${(ms / 1000).toFixed(1)} s`;
}

function clip(text: string, max = 90): string {
  const t = text.trim().replace(/\s{3,}/g, '  ');
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** One CLI's section: where it is, its version, each step with its states and time, what was recognized. */
function agentSection(agent: AgentReport): string[] {
  const lines = [`${MARK[agent.verdict]} ${agent.name}${agent.version ? ` ${agent.version}` : ''}${agent.binary ? `  ${agent.binary}` : ''}`];
  if (agent.verdict === 'not_found' || agent.binary === null) return [...lines, `    ${agent.summary}`];
  if (agent.support) lines.push(`    version: ${agent.support.level} (patterns ${agent.support.versions}): ${agent.support.note}`);
  for (const step of agent.steps) {
    const states = step.states.length > 0 ? `  [${step.states.join(' → ')}]` : '';
    lines.push(`    ${STEP_NAMES[step.step].padEnd(13)}${step.status.padEnd(8)}${seconds(step.durationMs).padStart(7)}  ${step.detail}${states}`);
    if (step.status === 'fail' && step.screen && step.screen.length > 0) {
      lines.push('        screen:');
      for (const row of step.screen) lines.push(`        │ ${clip(row, 110)}`);
    }
  }
  // The first evidence of each state, with the step it came in.
  const firsts = new Map<string, AgentReport['states'][number]>();
  for (const s of agent.states) if (!firsts.has(s.state)) firsts.set(s.state, s);
  if (firsts.size > 0) {
    lines.push('    recognized:');
    for (const s of firsts.values()) {
      const why = s.evidence ? `${s.evidence.rule}: "${clip(s.evidence.line, 70)}"` : (s.detail ?? '');
      lines.push(`      ${s.state.padEnd(17)}${why}  (${STEP_NAMES[s.step]})`);
    }
  }
  for (const spell of agent.unread) lines.push(`    unread for ${UNREAD_SCREEN_MS / 1000} s during ${STEP_NAMES[spell.step]}: "${clip(spell.lines.at(-1) ?? '')}"`);
  for (const note of agent.notes) lines.push(`    note: ${note}`);
  if (agent.savedTo) lines.push(`    screens: ${agent.distinctScreens} distinct, saved in ${agent.savedTo}`);
  return lines;
}

/** The report for people: a section per CLI, then the verdict lines. */
export function formatDoctorReport(report: DoctorReport): string {
  const sections = report.agents.flatMap((a) => [...agentSection(a), '']);
  const checked = report.agents.filter((a) => a.verdict !== 'not_found');
  const passed = checked.filter((a) => a.verdict === 'pass');
  const verdicts = report.agents.map((a) => `${MARK[a.verdict]} ${a.summary}`);
  const total =
    checked.length === 0
      ? 'doctor: no agent CLI found'
      : `doctor: ${passed.length} of ${checked.length} agent CLI${checked.length === 1 ? '' : 's'} read right${passed.length === checked.length ? '' : `; not read right: ${checked.filter((a) => a.verdict === 'fail').map((a) => a.name).join(', ')}`}`;
  return [`switchboard ${report.switchboard} doctor: ${report.size.cols}x${report.size.rows}, at most ${report.stepTimeoutMs / 1000} s a step, ${seconds(report.durationMs)} in all`, '', ...sections, ...verdicts, total, ...(report.savedTo ? [`saved: ${report.savedTo}`] : [])].join('\n');
}

function parseSize(value: unknown): { cols: number; rows: number } | undefined {
  if (value === undefined) return undefined;
  const m = typeof value === 'string' ? /^(\d+)x(\d+)$/i.exec(value) : null;
  if (!m) throw new UsageError(`--size needs COLSxROWS, e.g. 120x30, got '${typeof value === 'string' ? value : typeof value}'`);
  const cols = Number(m[1]);
  const rows = Number(m[2]);
  if (cols < 40 || rows < 10 || cols > 1000 || rows > 500) throw new UsageError(`--size ${cols}x${rows} is outside 40x10 to 1000x500`);
  return { cols, rows };
}

/** `doctor [AGENT...] [--save DIR] [--json] [--size COLSxROWS] [--timeout S] [--jobs N]` */
export async function doctorCommand(ctx: CliContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    save: { type: 'string' },
    json: { type: 'boolean' },
    size: { type: 'string' },
    timeout: { type: 'string' },
    jobs: { type: 'string' },
  });
  const size = parseSize(values.size);
  const timeoutS = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeoutS !== undefined && !(timeoutS > 0)) throw new UsageError(`--timeout needs seconds, got '${String(values.timeout)}'`);
  const jobs = intOption(values.jobs, 'jobs');
  if (jobs === 0) throw new UsageError('--jobs needs at least 1');
  const catalog = loadCatalog(ctx);
  for (const name of positionals) catalog.get(name);
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const report = await runDoctor({
      catalog,
      agents: positionals,
      env: ctx.env,
      ...(size ?? {}),
      ...(timeoutS !== undefined ? { stepTimeoutMs: Math.round(timeoutS * 1000) } : {}),
      ...(values.save !== undefined ? { saveDir: values.save as string } : {}),
      ...(jobs !== undefined ? { jobs } : {}),
      signal: abort.signal,
      // Progress for people; with --json the report is all (a script reads stdout and the exit code).
      onStep: (agent, step) => {
        if (!values.json) ctx.stderr.write(`[${agent}] ${STEP_NAMES[step.step]}: ${step.status} ${seconds(step.durationMs)}${step.status === 'fail' ? `: ${step.detail}` : ''}\n`);
      },
    });
    out(ctx, values.json ? JSON.stringify(report, null, 2) : formatDoctorReport(report));
    return report.ok ? 0 : EXIT_ERROR;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
