/**
 * Issue 14's check, end to end with the real CLIs: Codex, in a Switchboard pane, runs the shell
 * command `lask --async "…"` (the scripted model calls Codex's shell tool), which returns the ask's
 * id at once while Claude Code, in another pane, answers; the reply is then typed into the Codex
 * pane exactly once, when Codex is idle, also when Codex was still busy with its own turn when
 * Claude finished. Nothing here waits a guessed time: the scripted model holds the answers that
 * make a turn "slow" behind gates the test opens once it has seen what it waits for, and every
 * other wait is on a screen pattern, a state change or an ask becoming final.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type ClientSubscription, type SwitchboardClient } from '../../src/client/index.js';
import type { AskInfo } from '../../src/protocol/methods.js';
import { useScriptedModel } from './scripted-model.js';
import { useTestDaemon } from '../support/daemon.js';

const sm = useScriptedModel({
  name: 'async-ask-codex',
  title: 'lask --async from Codex',
  rules: [
    // The delivered replies first: they quote Claude's answers, which the question rules would match too.
    { match: 'Lima is the capital', steps: [{ text: 'Codex noted Lima.' }] },
    { match: 'Santiago is the capital', steps: [{ text: 'Codex noted Santiago.' }] },
    {
      match: 'ask claude about Peru',
      steps: [{ tool: 'shell', command: 'lask --async "What is the capital of Peru?"', description: 'Ask Claude without waiting' }, { text: 'Asked Claude about Peru.' }],
    },
    {
      match: 'ask claude about Chile',
      steps: [
        { tool: 'shell', command: 'lask --async "What is the capital of Chile?"', description: 'Ask Claude without waiting' },
        // Codex stays busy with its own turn until the test opens this gate.
        { text: 'Slow work finished.', wait_for: 'codex-slow-turn' },
      ],
    },
    // Claude's answer about Peru waits for the test: the ask is still under way when lask has returned.
    { match: 'capital of Peru', steps: [{ text: 'Lima is the capital of Peru.', wait_for: 'claude-peru' }] },
    { match: 'capital of Chile', steps: [{ text: 'Santiago is the capital of Chile.' }] },
  ],
});
const ctx = useTestDaemon();

interface StateEvent {
  state: string;
  at: number;
}

/** A pane's state changes as they come, and waits on them. */
class StateLog {
  readonly events: StateEvent[] = [];
  private readonly waiters = new Set<() => void>();

  push(event: StateEvent): void {
    this.events.push(event);
    for (const w of [...this.waiters]) w();
  }

  /** The first change at or after `since` that `pred` accepts, as soon as it has come. */
  until(pred: (e: StateEvent) => boolean, since: number, what: string, timeoutMs = 120_000): Promise<StateEvent> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = this.events.find((e) => e.at >= since && pred(e));
        if (!found) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`no state change for ${what} within ${timeoutMs} ms: ${JSON.stringify(this.events.filter((e) => e.at >= since))}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** The end of a turn begun at or after `since`: a busy state, then idle. */
  async turnEnded(since: number, what: string): Promise<StateEvent> {
    const busy = await this.until((e) => e.state !== 'idle', since, `${what} (busy)`);
    return this.until((e) => e.state === 'idle', busy.at, `${what} (idle again)`);
  }
}

let client: SwitchboardClient;
let subscription: ClientSubscription;
let codex: { paneId: string; home: string };
let claude: { paneId: string };
const codexStates = new StateLog();

beforeAll(async () => {
  client = await connect({ home: ctx.home });
  const folder = path.join(ctx.work, 'project');
  mkdirSync(folder, { recursive: true });
  const homes = { codex: sm.tempDir('sb-async-codex-').dir, claude: sm.tempDir('sb-async-claude-').dir };
  const [codexPane, claudePane] = await Promise.all(
    (['codex', 'claude'] as const).map((agent) => client.createPane({ agent, cwd: folder, agent_home: homes[agent], model_url: sm.model.url, cols: 160, rows: 50, ready_timeout_ms: 120_000 })),
  );
  if (!codexPane || !claudePane) throw new Error('the panes did not start');
  codex = { paneId: codexPane.pane_id, home: homes.codex };
  claude = { paneId: claudePane.pane_id };
  subscription = await client.subscribe({ paneId: codex.paneId, events: ['state'] }, { state: (s) => codexStates.push({ state: s.state, at: s.at }) });
}, 180_000);

afterAll(async () => {
  await subscription.unsubscribe().catch(() => undefined);
  client.close();
});

/** The header a delivered reply starts with (deliveryText in src/asks/delivery.ts). */
const header = (ask: AskInfo): string => `[switchboard reply from claude (pane ${claude.paneId}, ask ${ask.ask_id})]`;

/** Occurrences of `needle` in `haystack`. */
const count = (haystack: string, needle: string): number => haystack.split(needle).length - 1;

/** Everything the Codex pane showed, scrollback included, with wrapped rows joined. */
async function codexText(): Promise<string> {
  return (await client.getText(codex.paneId, { lines: 2_000, joinWrapped: true })).text;
}

/** The user messages of Codex's own transcript (its rollout files, under CODEX_HOME=home/.codex). */
function codexUserMessages(): string[] {
  const dir = path.join(codex.home, '.codex', 'sessions');
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /rollout-.*\.jsonl$/.test(f))
    .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n'))
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { type?: string; payload?: { type?: string; role?: string; content?: { text?: string }[] } })
    .filter((r) => r.type === 'response_item' && r.payload?.type === 'message' && r.payload.role === 'user')
    .map((r) => (r.payload?.content ?? []).map((c) => c.text ?? '').join(''));
}

/** The one ask Codex's pane made about `question`, once Claude's pane shows it typed. */
async function askFromCodex(question: string): Promise<AskInfo> {
  const typed = await client.waitFor(claude.paneId, { pattern: question.replace(/[?.]/g, '\\$&'), timeoutMs: 120_000 });
  expect(typed.matched, (await client.getText(codex.paneId, { lines: 200 })).text).toBe(true);
  const mine = (await client.askList()).asks.filter((a) => a.question === question);
  expect(mine).toHaveLength(1);
  return mine[0] as AskInfo;
}

/**
 * The ask once its delivery is over (delivered or failed). Typing ends when Codex shows it took the
 * prompt, so this is normally so already once Codex answered the reply; if not, it is looked at
 * again each time the Codex screen has settled.
 */
async function deliveryOver(id: string, timeoutMs = 60_000): Promise<AskInfo> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ask = await client.askGet(id);
    if (ask.delivery === 'delivered' || ask.delivery === 'failed' || Date.now() >= deadline) return ask;
    await client.waitFor(codex.paneId, { idleMs: 200, timeoutMs: 5_000 });
  }
}

/** Checks that `ask`'s reply reached Codex once: on its screen, in its transcript, and in what it sent the model. */
async function expectDeliveredOnce(ask: AskInfo, reply: string): Promise<void> {
  const text = await codexText();
  expect(count(text, header(ask)), text).toBe(1);
  // Every reply Codex got is told apart by its ask id: nothing else was typed into it twice either.
  expect(count(text, '[switchboard reply from'), text).toBe(count(text, '[switchboard reply from claude (pane'));
  const messages = codexUserMessages().filter((m) => m.includes(header(ask)));
  expect(messages).toHaveLength(1);
  expect(messages[0]).toContain(reply);
  const sent = sm.model.modelRequests('openai-responses').filter((r) => r.plan?.prompt.includes(header(ask)));
  expect(sent.map((r) => r.plan?.prompt.trim())).toEqual([`${header(ask)}\n${reply}`]);
}

describe('lask --async from inside a Codex pane', { timeout: 400_000 }, () => {
  it('returns the job id at once; the reply is typed into Codex once, when it is idle', async () => {
    const t0 = Date.now();
    await client.sendPrompt(codex.paneId, 'Please ask claude about Peru.');
    const ask = await askFromCodex('What is the capital of Peru?');
    // Asked from inside the pane: the ask is Codex's pane's, its reply to be delivered there.
    expect(ask).toMatchObject({ from: { pane_id: codex.paneId, name: 'codex' }, target: { pane_id: claude.paneId, agent: 'claude' }, delivery: 'pending' });
    // lask returned at once: Codex's turn is over (its next step ran on the tool's output, the job
    // id) while Claude's answer is still held back.
    const shown = await client.waitFor(codex.paneId, { pattern: 'Asked Claude about Peru\\.', timeoutMs: 120_000 });
    expect(shown.matched).toBe(true);
    await codexStates.turnEnded(t0, "Codex's turn that ran lask");
    const afterTool = sm.model.modelRequests('openai-responses').filter((r) => r.plan?.prompt.includes('ask claude about Peru') && r.plan.stepsDone === 1);
    expect(afterTool.length).toBeGreaterThan(0);
    expect(JSON.stringify(afterTool[0]?.body)).toContain(ask.ask_id);
    expect(['typing', 'waiting']).toContain((await client.askGet(ask.ask_id)).status);
    expect(await codexText()).not.toContain('[switchboard reply from');

    sm.model.openGate('claude-peru');
    const answered = await client.askWait(ask.ask_id, { timeoutMs: 120_000 });
    expect(answered).toMatchObject({ status: 'done', reply: 'Lima is the capital of Peru.', reply_source: 'transcript' });
    // Codex sat idle: the reply goes in, and Codex takes it as its next prompt.
    const noted = await client.waitFor(codex.paneId, { pattern: 'Codex noted Lima\\.', timeoutMs: 120_000 });
    expect(noted.matched, await codexText()).toBe(true);
    const delivered = await deliveryOver(ask.ask_id);
    expect(delivered).toMatchObject({ status: 'done', delivery: 'delivered' });
    expect(delivered.delivered_at ?? 0).toBeGreaterThanOrEqual(answered.ended_at ?? Infinity);
    await expectDeliveredOnce(ask, 'Lima is the capital of Peru.');
    // Codex's turn on the reply ends (the next prompt is not typed into a busy Codex).
    await codexStates.until((e) => e.state === 'idle', delivered.delivered_at ?? 0, "Codex's turn on the delivered reply");
  });

  it('waits for the idle prompt when Codex is still busy with its own turn as Claude finishes', async () => {
    const t0 = Date.now();
    await client.sendPrompt(codex.paneId, 'Please ask claude about Chile, then do your slow work.');
    const ask = await askFromCodex('What is the capital of Chile?');
    const answered = await client.askWait(ask.ask_id, { timeoutMs: 120_000 });
    expect(answered).toMatchObject({ status: 'done', reply: 'Santiago is the capital of Chile.', from: { pane_id: codex.paneId } });
    // Claude has finished; Codex has not (its next answer is held): the reply waits, untyped. The
    // queue decides when the ask ends, so a reply typed into a busy pane would be `delivering` by now.
    expect(answered.delivery).toBe('pending');
    const busy = (await client.paneStates()).states.find((s) => s.pane_id === codex.paneId);
    expect(['thinking', 'executing']).toContain(busy?.state);
    expect(sm.model.heldAt('codex-slow-turn')).toBe(1);
    expect(await codexText()).not.toContain(header(ask));
    expect((await client.askGet(ask.ask_id)).delivery).toBe('pending');

    const openedAt = Date.now();
    sm.model.openGate('codex-slow-turn');
    const finished = await client.waitFor(codex.paneId, { pattern: 'Slow work finished\\.', timeoutMs: 120_000 });
    expect(finished.matched).toBe(true);
    // Codex is idle again only once its held answer came; it was never idle in between.
    const idle = await codexStates.until((e) => e.state === 'idle', openedAt, "the end of Codex's slow turn");
    expect(codexStates.events.filter((e) => e.at >= t0 && e.at < openedAt && e.state === 'idle')).toEqual([]);
    const noted = await client.waitFor(codex.paneId, { pattern: 'Codex noted Santiago\\.', timeoutMs: 120_000 });
    expect(noted.matched, await codexText()).toBe(true);
    const delivered = await deliveryOver(ask.ask_id);
    expect(delivered).toMatchObject({ status: 'done', delivery: 'delivered' });
    // Typed only once Codex was idle after its slow turn.
    expect(delivered.delivered_at ?? 0).toBeGreaterThanOrEqual(idle.at);
    await expectDeliveredOnce(ask, 'Santiago is the capital of Chile.');
    // The first ask's reply is still there once, not typed again by this one's delivery.
    const first = (await client.askList()).asks.find((a) => a.question === 'What is the capital of Peru?');
    expect(first).toBeDefined();
    if (first) expect(count(await codexText(), header(first))).toBe(1);
  });
});
