/**
 * The live part of `switchboard doctor` for one agent CLI: against the scripted model, from an
 * isolated HOME, the CLI is started to its idle prompt, given a short prompt, a long one, and a
 * task whose shell command needs an approval (answered by the auto-approve policy), and must come
 * back to idle. Each step waits on the agent's states and its result, never on a clock, except for
 * the bound on how long a step may take.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { errorMessage } from '../core/errors.js';
import { detectScreen, type AgentCatalog, type AgentProfile, type AgentState } from '../agents/index.js';
import { ModelServer, readConversation } from '../model-server/index.js';
import { PaneRegistry } from '../pane/index.js';
import { CodingAgent, type ApprovalRecord, type ExecuteResult } from '../drivers/pane/coding-agent.js';
import { APPROVAL_COMMAND, APPROVAL_FILE, APPROVAL_PROMPT, APPROVAL_REPLY, DOCTOR_SCENARIO, DOCTOR_STEPS, LONG_REPLY, SHORT_PROMPT, SHORT_REPLY, longPrompt, squeeze, type DoctorStep } from './checks.js';
import { ScreenWatch, UNREAD_SCREEN_MS, type SeenScreen, type SeenState, type UnreadSpell } from './screen-watch.js';

export interface LiveCheckOptions {
  catalog: AgentCatalog;
  /** The environment the CLI starts from (its PATH finds the program; the sandbox withholds keys). */
  env: NodeJS.ProcessEnv;
  cols: number;
  rows: number;
  /** Longest any one step may take. */
  stepTimeoutMs: number;
  /** An empty folder of this check's own: the isolated HOME and the workdir go inside. */
  dir: string;
  /** Keep every distinct screen (for --save). */
  keepScreens: boolean;
  longPromptBytes?: number;
  signal?: AbortSignal;
  /** Told as each step ends. */
  onStep?: (step: StepReport) => void;
}

export interface StepReport {
  step: DoctorStep;
  status: 'pass' | 'fail' | 'skipped';
  /** null for a step that did not run. */
  durationMs: number | null;
  /** What was found, in one line. */
  detail: string;
  /** The states recognized during the step, in order (repeats folded). */
  states: AgentState[];
  /** For a failed step: the last non-empty rows of the screen. */
  screen?: string[];
}

/** An approval the agent asked for during the check, as the policy answered it. */
export interface CheckedApproval {
  tool: string | null;
  command: string | null;
  path: string | null;
  decision: ApprovalRecord['decision'];
  reason: string;
  keys: string[];
}

export interface LiveCheck {
  version: string | undefined;
  steps: StepReport[];
  states: SeenState[];
  unread: UnreadSpell[];
  approvals: CheckedApproval[];
  /** Warnings that do not fail the check (an approval answered twice: its first key was lost). */
  notes: string[];
  distinctScreens: number;
  screens: SeenScreen[];
  /** The isolated HOME and the workdir, for normalizing what is saved. */
  home: string;
  work: string;
}

/** CodingAgent's own timeouts are this much longer than a step's: the step's bound ends it first. */
const STOP_MARGIN_MS = 5_000;

/** Why a step was stopped before its task ended, with what was seen then. */
type Stop = ({ why: 'timeout' } | { why: 'unread'; spell: UnreadSpell }) & { state: AgentState; changed: boolean; screen: string[] };

type StepResult = { ok: true; detail: string } | { ok: false; detail: string; screen?: string[] };

const pass = (detail: string): StepResult => ({ ok: true, detail });
const fail = (detail: string, screen?: string[]): StepResult => ({ ok: false, detail, ...(screen ? { screen } : {}) });

/** The first line of a message (start errors append the whole screen). */
function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? '';
}

/**
 * A start error in one line: its first line without the screen it appends, the dialogs answered
 * before it (a wrong answer is the usual cause), and the screen's last line.
 */
function describeError(message: string, states: readonly SeenState[]): string {
  const [head = '', ...screen] = message.split('\n');
  const dialogs = [...new Set(states.map((s) => /^dialog:(.+)$/.exec(s.evidence?.rule ?? '')?.[1]).filter((d): d is string => d !== undefined))];
  const last = screen.map((l) => l.trim()).filter((l) => l !== '').at(-1);
  const after = dialogs.length > 0 ? `, after answering ${dialogs.join(', ')}` : '';
  return `${head.replace(/;?\s*screen:\s*$/, '')}${after}${last !== undefined ? `; screen: ${quote(last)}` : ''}`;
}

function quote(line: string | undefined, max = 80): string {
  // Footers pad their parts apart with runs of spaces: one gap is enough to read them.
  const text = (line ?? '').trim().replace(/\s{3,}/g, '  ');
  return `"${text.length > max ? `${text.slice(0, max - 1)}…` : text}"`;
}

/** Runs the live check of `profile`; never throws for what the CLI does. */
export async function runLiveCheck(profile: AgentProfile, options: LiveCheckOptions): Promise<LiveCheck> {
  const home = path.join(options.dir, 'home');
  const work = path.join(options.dir, 'work');
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  const model = await ModelServer.start({ scenario: DOCTOR_SCENARIO, cwd: work });
  const registry = new PaneRegistry({ defaults: { cols: options.cols, rows: options.rows }, baseEnv: options.env });
  let step: DoctorStep = 'start';
  let watch: ScreenWatch | undefined;
  /** The running step: how to stop it, and why it was stopped early (set from timers and events). */
  const running: { abort: AbortController; stopped: Stop | undefined } = { abort: new AbortController(), stopped: undefined };
  const created = registry.onPaneCreated((pane) => {
    if (watch) return;
    watch = new ScreenWatch(pane, profile.screensFor(pane.agent?.version), () => step, options.keepScreens);
    watch.onUnread((spell) => {
      running.stopped ??= { why: 'unread', spell, ...seenNow(), changed: true };
      watch?.freeze();
      running.abort.abort();
    });
  });
  const agent = new CodingAgent({
    tool: profile.data.name,
    catalog: options.catalog,
    autoApprove: true,
    sandbox: { home, modelUrl: model.url },
    registry,
    timeoutMs: options.stepTimeoutMs + STOP_MARGIN_MS,
    idleTimeoutMs: options.stepTimeoutMs + STOP_MARGIN_MS,
  });
  const long = longPrompt(options.longPromptBytes);
  /** The model's log keeps the start of each prompt; the request's body holds all of it. */
  const longHead = long.slice(0, 40);
  /** What each step gives the CLI, as the model's log shows it. */
  const stepPrompt: Partial<Record<DoctorStep, string>> = { prompt: SHORT_PROMPT, long_prompt: longHead, approval: APPROVAL_PROMPT };
  const steps: StepReport[] = [];
  const approvals: CheckedApproval[] = [];
  const notes: string[] = [];
  let version: string | undefined;

  const statesSince = (from: number): AgentState[] =>
    (watch?.states.slice(from) ?? []).map((s) => s.state).filter((s, i, all) => s !== all[i - 1]);

  const stoppedEarly = (): boolean => running.stopped !== undefined;
  /** The state and screen at the moment a step is stopped (stopping it ends the CLI, which changes both). */
  const seenNow = (): { state: AgentState; screen: string[] } => ({ state: watch?.tracker.state.state ?? 'starting', screen: watch?.tail() ?? [] });

  /** Why a step stopped early, or why its task did not complete, in one line. */
  const stopReason = (result?: ExecuteResult): StepResult => {
    const stopped = running.stopped;
    if (stopped?.why === 'unread') {
      const last = stopped.spell.lines.at(-1);
      return fail(`the screen was not recognized for ${UNREAD_SCREEN_MS / 1000} s (no pattern of the profile matches): ${quote(last)}`, stopped.spell.lines);
    }
    if (stopped?.why === 'timeout') {
      // A state that never changed says no turn was seen: the prompt did not arrive, or (the
      // model's log tells) the whole turn passed between two looks at the screen.
      const asked = stepPrompt[step];
      const answered = asked !== undefined && model.modelRequests().some((r) => r.plan?.role === 'main' && r.plan.prompt.includes(asked));
      const unseen = answered ? 'no turn was seen, though the model received the prompt' : 'no turn started';
      const how = stopped.changed ? `last state: ${stopped.state}` : `the state stayed ${stopped.state}: ${unseen}`;
      return fail(`no result within ${Math.round(options.stepTimeoutMs / 1000)} s (${how})`, stopped.screen);
    }
    if (result) {
      const why = result.errorMessage ?? result.question ?? '';
      return fail(`${result.status.replace('_', ' ')}${why ? `: ${firstLine(why)}` : ''}`, watch?.tail());
    }
    return fail('stopped', watch?.tail());
  };

  const runStep = async (name: DoctorStep, body: (signal: AbortSignal) => Promise<StepResult>): Promise<boolean> => {
    step = name;
    running.stopped = undefined;
    running.abort = new AbortController();
    const stepAbort = running.abort;
    const from = watch?.states.length ?? 0;
    const onOuterAbort = (): void => stepAbort.abort();
    options.signal?.addEventListener('abort', onOuterAbort);
    // The step's own bound, before CodingAgent's (STOP_MARGIN_MS later), so the state and screen
    // are recorded before anything ends the CLI.
    const timer = setTimeout(() => {
      running.stopped ??= { why: 'timeout', ...seenNow(), changed: (watch?.states.length ?? 0) > from };
      watch?.freeze();
      stepAbort.abort();
    }, options.stepTimeoutMs);
    const started = performance.now();
    let result: StepResult;
    try {
      result = await body(stepAbort.signal);
    } catch (err) {
      result = fail(describeError(errorMessage(err), watch?.states ?? []), watch?.tail());
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onOuterAbort);
    }
    // A step that was stopped says why, whatever its task reported on the way out. (Read through
    // a function: the compiler cannot see that timers and events set it during the await.)
    if (stoppedEarly()) result = stopReason();
    const report: StepReport = {
      step: name,
      status: result.ok ? 'pass' : 'fail',
      durationMs: Math.round(performance.now() - started),
      detail: result.detail,
      states: statesSince(from),
      ...(!result.ok && result.screen ? { screen: result.screen } : {}),
    };
    steps.push(report);
    options.onStep?.(report);
    return result.ok;
  };

  /** The task's reply, checked on screen and in the model's request log. */
  const taskDone = (result: ExecuteResult, prompt: string, reply: string): StepResult => {
    if (running.stopped) return stopReason(result);
    const received = model.modelRequests().some((r) => r.plan?.role === 'main' && r.plan.prompt.includes(prompt));
    if (result.status !== 'completed') return stopReason(result);
    if (!received) return fail(`the CLI reported the turn done (${result.completedBy.join(', ')}), but the model never received the prompt`, watch?.tail());
    if (!squeeze(result.outputLog).includes(squeeze(reply))) return fail(`the model's reply ${quote(reply)} never showed on screen`, watch?.tail());
    return pass(`answered (${result.completedBy.join(', ')})`);
  };

  const checks: Record<Exclude<DoctorStep, 'start'>, (signal: AbortSignal) => Promise<StepResult>> = {
    prompt: async (signal) => taskDone(await agent.execute(SHORT_PROMPT, { workdir: work, signal }), SHORT_PROMPT, SHORT_REPLY),
    long_prompt: async (signal) => {
      const result = await agent.execute(long, { workdir: work, signal });
      const prompts = model
        .modelRequests()
        .filter((r) => r.plan?.role === 'main' && r.plan.prompt.includes(longHead) && r.api !== undefined)
        .map((r) => readConversation(r.api as NonNullable<typeof r.api>, r.body).prompt);
      // Whitespace aside: a CLI that takes a long prompt from a file gets its lines folded (Gemini).
      const whole = prompts.some((p) => squeeze(p).includes(squeeze(long)));
      if (!whole && prompts.length > 0 && !running.stopped) {
        const longest = Math.max(...prompts.map((p) => p.length));
        return fail(`the model received ${longest} characters of the ${long.length} sent`, watch?.tail());
      }
      const done = taskDone(result, longHead, LONG_REPLY);
      return done.ok ? pass(`${long.length} characters received whole; ${done.detail}`) : done;
    },
    approval: async (signal) => {
      const result = await agent.execute(APPROVAL_PROMPT, { workdir: work, signal });
      for (const a of result.approvals) {
        approvals.push({ tool: a.request?.tool ?? null, command: a.request?.command ?? null, path: a.request?.path ?? null, decision: a.decision, reason: a.reason, keys: a.answered?.keys ?? [] });
      }
      const first = result.approvals[0];
      if (first && first.decision !== 'allow') {
        const read = first.request ? `${first.request.tool} ${quote(first.request.command ?? first.request.path ?? first.request.toolName ?? '')}` : 'nothing (the prompt could not be parsed)';
        return fail(`the approval was not allowed by the auto-approve policy: read as ${read}; ${first.reason}`, watch?.tail());
      }
      const done = taskDone(result, APPROVAL_PROMPT, APPROVAL_REPLY);
      if (!done.ok) return done;
      if (!first) return fail(`no approval prompt was seen (the CLI ran the command without asking, or it was not recognized)`, watch?.tail());
      const command = first.request?.command ?? '';
      if (!squeeze(command).includes(squeeze(APPROVAL_COMMAND))) return fail(`the approval was read as ${quote(command)}, not the command the model asked for (${quote(APPROVAL_COMMAND)})`, watch?.tail());
      if (!existsSync(path.join(work, APPROVAL_FILE))) return fail(`approved, but ${APPROVAL_FILE} was not written`, watch?.tail());
      if (result.approvals.length > 1) notes.push(`the approval was answered ${result.approvals.length} times (a key was not taken the first time)`);
      return pass(`${first.request?.tool ?? 'tool'} ${quote(command)} allowed by policy (keys ${first.answered?.keys.join(' ') ?? '-'}); ${APPROVAL_FILE} written`);
    },
    idle: (signal) => {
      const tracker = watch?.tracker;
      if (!tracker) return Promise.resolve(fail('no pane'));
      return new Promise<StepResult>((resolve) => {
        const done = (result: StepResult): void => {
          sub.dispose();
          signal.removeEventListener('abort', onAbort);
          resolve(result);
        };
        const check = (): void => {
          const now = tracker.state;
          if (now.state === 'idle') done(pass(`idle: ${quote(now.evidence?.line)}`));
          else if (now.state === 'exited') done(fail('the agent exited', watch?.tail()));
        };
        const onAbort = (): void => done(stopReason());
        const sub = tracker.onChange(check);
        signal.addEventListener('abort', onAbort);
        check();
      });
    },
  };

  try {
    let ok = await runStep('start', async (signal) => {
      const started = await agent.start({ workdir: work, signal });
      version = started.version;
      // Ready means the launcher saw the idle prompt hold; the evidence is read off that screen.
      const pane = agent.pane;
      const read = pane ? detectScreen(profile.screensFor(version), { lines: pane.screenLines(), ansiLines: pane.snapshot({ ansi: true }).lines }) : undefined;
      return pass(`ready at its idle prompt${read?.evidence ? ` (${read.evidence.rule}: ${quote(read.evidence.line)})` : ''}`);
    });
    for (const name of DOCTOR_STEPS.slice(1) as Exclude<DoctorStep, 'start'>[]) {
      if (!ok) {
        steps.push({ step: name, status: 'skipped', durationMs: null, detail: 'not run: an earlier step failed', states: [] });
        continue;
      }
      ok = await runStep(name, checks[name]);
    }
  } finally {
    // What the CLI does while it is ended belongs to no step.
    watch?.dispose();
    await agent.dispose();
    created.dispose();
    await registry.close({ graceMs: 2_000 });
    await model.close();
  }
  return {
    version,
    steps,
    states: watch?.states ?? [],
    unread: watch?.unread ?? [],
    approvals,
    notes,
    distinctScreens: watch?.distinctScreens ?? 0,
    screens: watch?.screens ?? [],
    home,
    work,
  };
}
