/**
 * The end-to-end flow every agent CLI goes through, against the scripted model, through the daemon:
 * start to the idle prompt (first-run dialogs answered by policy); a prompt, work in progress, the
 * reply, idle; a tool call, its approval prompt, the answer, the tool's effect on disk, the final
 * reply, idle; a model error as the CLI shows it. Every screen passed through is recorded, and the
 * agent's sockets are watched to prove it talked to nothing but 127.0.0.1.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { connect, type NormalizedEntry, type Notifications, type SwitchboardClient } from '../../src/index.js';
import { AgentCatalog, detectScreen, type Detection, type ScreenKind, type ScreenRows } from '../../src/agents/index.js';
import { ModelServer, type Scenario } from '../../src/model-server/index.js';
import type { TestDaemonContext } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { LoopbackGuard } from '../support/loopback-guard.js';
import { recordScreen } from '../support/screens.js';
import { sleep, tempDir } from '../support/shell.js';
import { until } from '../support/processes.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where the test line installs the pinned CLIs, and the aider stand-in. */
export const AGENT_BIN_DIRS = [path.join(root, 'test', 'agent-clis', 'node_modules', '.bin'), path.join(root, 'test', 'fixtures', 'aider-standin')];

/** OpenCode would fetch this package from the registry at start; the test line installed it here. */
export const OPENCODE_PLUGIN_DIR = path.join(root, 'test', 'agent-clis', 'opencode-plugin');

/** Lets the daemon in this test process find the pinned CLIs (set before the daemon starts). */
export function useAgentBinaries(): void {
  process.env.SWITCHBOARD_AGENT_PATH = AGENT_BIN_DIRS.join(path.delimiter);
  process.env.SWITCHBOARD_OPENCODE_PLUGIN_DIR = OPENCODE_PLUGIN_DIR;
}

export interface FlowOptions {
  agent: string;
  /** The HTTP status the model fails with (CLIs that retry some statuses forever get one they show). */
  errorStatus: 500 | 400;
  /** Dialogs the first run must pass through before its idle prompt, by id. */
  expectDialogs: string[];
  /**
   * Dialogs the CLI opens once its model list loads, which under load is after its idle prompt
   * (Codex's model nudge): answered at start-up or, by the same policy, when the first prompt is sent.
   */
  lateDialogs?: string[];
  /** The model every model request must name: the configured one, kept by the first-run policy. */
  keptModel?: string;
  /** Text of the error as the CLI shows it (a pattern), when it shows the model's message. */
  errorShown: RegExp;
  /** Folder name prefix for recorded screens, when the program is not the real CLI. */
  screensLabel?: string;
}

/** The gate the first reply waits behind: the test opens it once it has seen the CLI at work. */
const THINKING_GATE = 'thinking-seen';

/**
 * The flow's scripted model. With `firstReplyGate`, the first reply waits behind that gate until
 * the test opens it (to see the CLI at work for as long as it takes to look).
 */
export function flowScenario(errorStatus: number, firstReplyGate?: string): Scenario {
  return {
    name: 'end-to-end',
    title: 'Scripted session',
    rules: [
      // Gated, the answer waits until the test has seen the CLI at work: a fixed delay passed
      // unseen on a loaded machine (CI saw a 2 s Gemini turn start and end between two looks).
      { match: 'say hello', steps: [{ text: 'Hello from the scripted model.', ...(firstReplyGate ? { wait_for: firstReplyGate } : {}) }] },
      {
        match: 'write a file',
        steps: [
          { tool: 'shell', command: 'echo hello-from-tool > tool_out.txt && cat tool_out.txt', description: 'Write tool_out.txt', escalate: true },
          { text: 'Done: wrote tool_out.txt.' },
        ],
      },
      { match: 'fail now', steps: [{ error: errorStatus as 500, message: 'scripted failure for the test' }] },
    ],
  };
}

/** Polls the pane's screen until the profile's detection says `kind` (and `extra` holds). */
async function untilDetected(client: SwitchboardClient, paneId: string, detect: (screen: ScreenRows) => Detection, kind: ScreenKind, what: string, extra: (d: Detection, lines: string[]) => boolean = () => true, timeoutMs = 30_000): Promise<Detection> {
  const deadline = Date.now() + timeoutMs;
  let lines: string[] = [];
  let d: Detection = { kind: 'unknown' };
  while (Date.now() < deadline) {
    lines = (await client.getScreen(paneId)).lines;
    d = detect({ lines, ansiLines: (await client.getScreen(paneId, { ansi: true })).lines });
    if (d.kind === kind && extra(d, lines)) return d;
    await sleep(40);
  }
  throw new Error(`${what}: never saw ${kind} (last ${d.kind}); screen:\n${lines.filter((l) => l.trim()).join('\n')}`);
}

/** Runs the whole flow for one agent; the test file provides the daemon. */
export async function runAgentFlow(t: TestDaemonContext, options: FlowOptions): Promise<void> {
  const profile = new AgentCatalog().get(options.agent);
  const model = await ModelServer.start({ scenario: flowScenario(options.errorStatus, THINKING_GATE) });
  const home = tempDir(`sb-${options.agent}-home-`);
  const work = tempDir(`sb-${options.agent}-work-`);
  const client = await connect({ home: t.home, env: cleanEnv() });
  let guard: LoopbackGuard | undefined;
  let paneId: string | undefined;
  try {
    const created = await client.createPane({ agent: options.agent, cwd: work.dir, agent_home: home.dir, model_url: model.url, cols: 120, rows: 40 });
    paneId = created.pane_id;
    guard = new LoopbackGuard(paneId);
    const agent = created.agent;
    expect(agent?.name).toBe(options.agent);
    expect(agent?.ready_ms).toBeGreaterThan(0);
    // A dialog still on screen, unchanged, after its answer is answered again (a slow restart under
    // load looks like lost keys): each expected dialog, in order, however often.
    const late = options.lateDialogs ?? [];
    const answered = (agent?.dialogs ?? []).map((d) => d.id).filter((id, i, all) => id !== all[i - 1]);
    expect(answered.filter((id) => !late.includes(id))).toEqual(options.expectDialogs);
    expect(agent?.dialogs.every((d) => d.decision === 'accept')).toBe(true);
    const version = agent?.version ?? null;
    const screens = profile.screensFor(version ?? undefined);
    const detect = (screen: ScreenRows): Detection => detectScreen(screens, screen);
    const record = (stage: string): Promise<string[]> =>
      recordScreen(client, created.pane_id, { agent: options.screensLabel ?? options.agent, version, stage, replace: [[work.dir, '/home/dev/work'], [home.dir, '/home/dev']] });
    const id = created.pane_id;

    // Ready: the idle prompt, recorded. A dialog the CLI opens once its model list loads may come
    // right after it under load (Codex's model nudge): the pane's responder answers it by the same
    // policy, and the idle prompt is back.
    // The recorded screen is the last one looked at: the idle one once it shows. A late dialog may
    // still open after it; the prompt below copes with that as it would for a person's prompt.
    let startScreen: string[] = [];
    const idleStart = async (): Promise<boolean> => detect({ lines: (startScreen = await record('idle-start')) }).kind === 'idle';
    if (late.length > 0) await until(idleStart, 'the idle prompt, a late dialog answered').catch(() => undefined);
    else await idleStart();
    expect(detect({ lines: startScreen }).kind, startScreen.join('\n')).toBe('idle');

    // A prompt: the CLI works on it, then shows the reply and is idle again.
    await client.sendPrompt(id, 'say hello please');
    await untilDetected(client, id, detect, 'busy', 'thinking');
    await record('thinking');
    // While the gate holds the reply, the agent's connection to the model is surely open: the guard
    // looks now. Its 50 ms samples alone missed every connection once on a loaded CI machine.
    await until(() => model.heldAt(THINKING_GATE) > 0, 'the first model request, held at the gate');
    await until(() => {
      guard?.sample();
      return guard?.seen.some((address) => address.endsWith(`:${model.port}`)) === true;
    }, 'the loopback guard to see the connection to the scripted model');
    model.openGate(THINKING_GATE);
    await untilDetected(client, id, detect, 'idle', 'reply', (_, lines) => lines.some((l) => l.includes('Hello from the scripted model.')));
    await record('reply-idle');
    expect(model.modelRequests().some((r) => r.plan?.role === 'main' && r.plan.prompt.includes('say hello please'))).toBe(true);
    if (options.keptModel) {
      const models = model.modelRequests().map((r) => (r.body as { model?: unknown }).model);
      expect(models.length).toBeGreaterThan(0);
      expect(models.every((m) => m === options.keptModel)).toBe(true);
    }

    // A tool call: the approval prompt, the answer, the effect on disk, the final reply, idle.
    const states: Notifications['state'][] = [];
    const stateSub = await client.subscribe({ paneId: id, events: ['state'] }, { state: (n) => states.push(n) });
    await client.sendPrompt(id, 'write a file please');
    const approval = await untilDetected(client, id, detect, 'approval', 'approval prompt');
    await record('approval');
    expect(approval.evidence?.line).toBeTruthy();
    expect(existsSync(path.join(work.dir, 'tool_out.txt'))).toBe(false);
    // Answered the way the dashboard's Approve button does: the option on screen that means allow-once.
    await until(() => states.some((n) => n.state === 'waiting_approval'), 'the waiting_approval state');
    expect(states.map((n) => n.state)).toContain('waiting_approval');
    const pending = (await client.paneStates()).states.find((st) => st.pane_id === id);
    expect(pending?.state).toBe('waiting_approval');
    // An answer names the prompt it means; one meant for another prompt is refused, nothing pressed.
    const approvalId = pending?.approval?.id ?? undefined;
    if (approvalId !== undefined) await expect(client.answerApproval(id, 'allow', `${approvalId}-stale`)).rejects.toMatchObject({ code: 'CONFLICT' });
    const approved = await client.answerApproval(id, 'allow', approvalId);
    expect(approved.answered.keys.length).toBeGreaterThan(0);
    await stateSub.unsubscribe();
    // The shell creates the file before it writes to it: wait for the content, not the name.
    const written = (): boolean => existsSync(path.join(work.dir, 'tool_out.txt')) && readFileSync(path.join(work.dir, 'tool_out.txt'), 'utf8').endsWith('\n');
    await until(written, 'tool_out.txt to be written');
    expect(readFileSync(path.join(work.dir, 'tool_out.txt'), 'utf8')).toBe('hello-from-tool\n');
    await untilDetected(client, id, detect, 'idle', 'final reply', (_, lines) => lines.some((l) => l.includes('Done: wrote tool_out.txt.')));
    await record('done-idle');
    const toolRound = model.modelRequests().filter((r) => r.plan?.prompt.includes('write a file please'));
    expect(toolRound.map((r) => r.plan?.step)).toEqual(expect.arrayContaining([0, 1]));

    // A model error, as the CLI shows it.
    await client.sendPrompt(id, 'fail now please');
    const failed = await untilDetected(client, id, detect, 'idle', 'error shown', (d) => d.error !== undefined);
    await record('error');
    expect(`${failed.error?.line ?? ''}\n${(await client.getScreen(id)).text}`).toMatch(options.errorShown);
    expect(model.modelRequests().some((r) => r.plan?.reply === 'error')).toBe(true);

    await expectScreenEntries(client, id);

    guard.stop();
    // The guard is not vacuous: it saw the agent's connection to the scripted model…
    expect(guard.seen.some((address) => address.endsWith(`:${model.port}`))).toBe(true);
    // …and nothing that was not loopback.
    expect(guard.outside).toEqual([]);
  } finally {
    guard?.stop();
    if (paneId) await client.remove(paneId).catch(() => undefined);
    client.close();
    await model.close();
    home.cleanup();
    work.cleanup();
  }
}

/**
 * The same session as structured entries read off the screens (issue 5: an interactive pane yields
 * entries too): each prompt given, the approval asked for, each reply without the input box or the
 * echoed prompt, and the model error.
 */
async function expectScreenEntries(client: SwitchboardClient, paneId: string): Promise<void> {
  const read = async (): Promise<NormalizedEntry[]> =>
    (await client.logGetHistory(paneId, { limit: 10_000 })).messages.flatMap((m) => (m.msg.type === 'normalized' ? [m.msg.entry] : []));
  const replies = (entries: NormalizedEntry[]): string[] => entries.filter((e) => e.type === 'assistant_message').map((e) => e.content);
  let entries = await read();
  // The tracker calls a turn over once the prompt has held still (500 ms): wait for that.
  await until(async () => {
    entries = await read();
    return replies(entries).some((r) => r.includes('Done: wrote tool_out.txt.')) && entries.some((e) => e.type === 'error');
  }, 'the last reply and the error in the log').catch(() => undefined);
  const explain = JSON.stringify(entries.map((e) => [e.type, e.content]));
  expect(entries.filter((e) => e.type === 'user_message').map((e) => e.content), explain).toEqual(['say hello please', 'write a file please', 'fail now please']);
  expect(replies(entries).some((r) => r.includes('Hello from the scripted model.')), explain).toBe(true);
  expect(replies(entries).some((r) => r.includes('Done: wrote tool_out.txt.')), explain).toBe(true);
  for (const reply of replies(entries)) expect(reply, explain).not.toMatch(/say hello please|write a file please|[│╭╰]/);
  const asked = entries.find((e) => e.metadata?.status === 'pending');
  expect(asked?.type, explain).toMatch(/^(command_run|tool_use)$/);
  if (asked?.type === 'command_run') expect(asked.content, explain).toContain('tool_out.txt');
  // Its answer is logged too, paired with it.
  const answer = entries.find((e) => e.type === 'tool_result' && e.metadata?.toolCallId === asked?.metadata?.toolCallId);
  expect(answer?.content, explain).toMatch(/^approved by a client/);
  expect(answer?.metadata?.status, explain).toBe('success');
  expect(entries.some((e) => e.type === 'error'), explain).toBe(true);
  // In the order they happened: the reply to a prompt comes after it.
  const order = entries.map((e) => e.type);
  expect(order.indexOf('assistant_message'), explain).toBeGreaterThan(order.indexOf('user_message'));
}
