/**
 * `resume` for the multi-turn drivers with the real CLIs against the scripted model: a conversation
 * opened with another one's `agentSessionId` (same sandbox home, same work folder) continues it, so
 * the model's request for its first prompt carries the earlier conversation; also when the earlier
 * CLI was killed (SIGKILL) in the middle of a turn, held at a gate of the model server. The earlier
 * turns are the CLI's context, never entries of the new conversation. An id the CLI does not know
 * fails the open with AGENT_ERROR and the CLI's reason, and no process is left behind.
 *
 * Gemini CLI 0.61 advertises loadSession but its session/load wipes the session it loads (see
 * LOAD_LOSES_HISTORY in src/drivers/acp-session.ts): the driver refuses it before it asks, and the
 * earlier session's file is left as it was.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isSwitchboardError } from '../../src/core/errors.js';
import { AcpDriver } from '../../src/drivers/acp-driver.js';
import { ClaudeConversationDriver } from '../../src/drivers/claude-conversation.js';
import { CodexConversationDriver } from '../../src/drivers/codex-conversation.js';
import type { Conversation, ConversationDriver, ConversationOptions, TurnResult } from '../../src/drivers/conversation.js';
import type { NormalizedEntry } from '../../src/output/entry.js';
import { findProcessesByEnv } from '../../src/platform/index.js';
import { AGENT_BIN_DIRS } from './agent-flow.js';
import { useScriptedModel } from './scripted-model.js';
import { conversationSaved, filesUnder } from './conversation-files.js';
import { until } from '../support/processes.js';

const MARKER = 'SWITCHBOARD_SESSION_ID';
const TOOLS = ['claude', 'codex', 'gemini', 'opencode'] as const;
type Tool = (typeof TOOLS)[number];
/** The CLIs whose pinned version can continue a conversation. */
const RESUMES: Record<Tool, boolean> = { claude: true, codex: true, gemini: false, opencode: true };
/** What each driver's refusal begins with. */
const refusal = (tool: Tool, id: string): string =>
  ({
    claude: `claude could not resume conversation ${id} (`,
    codex: `codex could not resume thread ${id} (`,
    gemini: `gemini cannot resume a conversation: gemini-cli 0.61`,
    opencode: `opencode cannot resume a conversation: session/load of ${id} was refused: `,
  })[tool];
/** The gate each CLI's held turn waits behind; never opened, so the reply never comes. */
const gateOf = (tool: Tool): string => `held-${tool}`;
const holdPrompt = (tool: Tool): string => `hold the word mango-${tool} for me`;

const scripted = useScriptedModel({
  name: 'resume',
  title: 'Scripted conversations resumed',
  rules: [
    { match: 'remember the word', steps: [{ text: 'Noted: the word is pineapple.' }] },
    { match: 'which word', steps: [{ text: 'The word was pineapple.' }] },
    ...TOOLS.map((tool) => ({ match: holdPrompt(tool), steps: [{ text: 'Noted: mango.', wait_for: gateOf(tool) }] })),
  ],
});

const sessions: Conversation[] = [];
// Before the model stops (this hook runs first): whatever a failed test left open is closed.
afterAll(async () => {
  for (const s of sessions) await s.close();
});

interface Setup {
  driver: ConversationDriver;
  home: string;
  open: (extra?: Partial<ConversationOptions>) => Promise<Conversation>;
}

/** One sandbox home and one work folder, shared by every conversation of the case. */
function setup(tool: Tool): Setup {
  const home = scripted.tempDir(`sb-resume-${tool}-home-`).dir;
  const work = scripted.tempDir(`sb-resume-${tool}-work-`).dir;
  const sandbox = { home, modelUrl: scripted.model.url };
  // Gemini writes reports into its temporary folder: the case's own.
  const tmp = scripted.tempDir(`sb-resume-${tool}-tmp-`).dir;
  const driver: ConversationDriver =
    tool === 'claude' ? new ClaudeConversationDriver({ binaryDirs: AGENT_BIN_DIRS }) : tool === 'codex' ? new CodexConversationDriver({ binaryDirs: AGENT_BIN_DIRS }) : new AcpDriver({ tool, binaryDirs: AGENT_BIN_DIRS, env: { TMPDIR: tmp } });
  const open = async (extra: Partial<ConversationOptions> = {}): Promise<Conversation> => {
    const session = await driver.open({ cwd: work, sandbox, ...extra });
    sessions.push(session);
    return session;
  };
  return { driver, home, open };
}

const requestsFor = (prompt: string): ReturnType<typeof scripted.model.modelRequests> => scripted.model.modelRequests().filter((r) => r.plan?.role === 'main' && r.plan.prompt.includes(prompt));
const mainRequests = (): number => scripted.model.modelRequests().filter((r) => r.plan?.role === 'main').length;
const log = (session: Conversation): NormalizedEntry[] => session.entries.history().map((m) => m.msg);
const texts = (entries: NormalizedEntry[], type: NormalizedEntry['type']): string[] => entries.filter((e) => e.type === type).map((e) => e.content.trim());
const dump = (value: unknown): string => JSON.stringify(value, null, 1);


/** SIGKILL; a process already gone (a short-lived helper, one that ended with its parent) is no failure. */
function killGone(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Closed, with none of its processes left, nor any other of the case's sandbox home. */
async function closeAll(home: string, ...closing: Conversation[]): Promise<void> {
  for (const s of closing) await s.close();
  for (const s of closing) expect(findProcessesByEnv(MARKER, s.id)).toEqual([]);
  expect(findProcessesByEnv('HOME', home)).toEqual([]);
}

/**
 * B continued A: its turn completed, the model's request for it carried A's prompt, and B's own
 * entries are its own (a note of what it resumed, then its prompt), none of A's.
 */
function expectContinued(b: Conversation, turn: TurnResult, earlierPrompt: string, resumed: string): void {
  expect(turn.status, dump(turn)).toBe('completed');
  expect(texts(turn.entries, 'assistant_message')).toContain('The word was pineapple.');
  const request = requestsFor('which word').at(-1);
  expect(request, 'the model was asked for B\'s prompt').toBeDefined();
  expect(JSON.stringify(request?.body)).toContain(earlierPrompt);
  const entries = log(b);
  expect(texts(entries, 'user_message')).toEqual(['which word did I ask you to remember?']);
  expect(entries.filter((e) => e.content.includes(earlierPrompt) || e.content.includes('Noted: the word is pineapple.'))).toEqual([]);
  const notes = texts(entries, 'system_message').join('\n');
  expect(notes).toContain(`resumed`);
  expect(notes).toContain(resumed);
}

/** An ACP agent replayed the loaded session's history, and none of it became an entry (expectContinued). */
function expectReplayKeptOut(tool: Tool, b: Conversation): void {
  if (tool !== 'gemini' && tool !== 'opencode') return;
  expect(texts(log(b), 'system_message').join('\n')).toMatch(/resumed session \S+ \(\w+ replayed [1-9]\d* updates of its history, not recorded here\)/);
}

/**
 * The open is refused in the driver's words, nothing is asked of the model, no process is left,
 * and the earlier conversation's files are as they were (a refused load did not wipe them).
 */
async function expectRefusedUnharmed(tool: Tool, home: string, id: string, open: () => Promise<Conversation>): Promise<void> {
  // The earlier session's own file (named by its id's first 8 characters); a new process writes one of its own beside it.
  const snapshot = (): Record<string, string> => Object.fromEntries(filesUnder(home).filter((f) => f.includes(`${path.sep}chats${path.sep}`) && path.basename(f).includes(id.slice(0, 8))).map((f) => [f, readFileSync(f, 'utf8')]));
  const before = snapshot();
  expect(Object.values(before).some((text) => text.includes(id))).toBe(true);
  const requests = mainRequests();
  const refused = await open().catch((err: unknown) => err);
  expect(isSwitchboardError(refused, 'AGENT_ERROR'), String(refused)).toBe(true);
  expect((refused as Error).message).toContain(refusal(tool, id));
  expect(mainRequests()).toBe(requests);
  expect(findProcessesByEnv('HOME', home)).toEqual([]);
  expect(snapshot()).toEqual(before);
}

describe.each(TOOLS)('resume with %s', (tool) => {
  const continues = (what: string): string => (RESUMES[tool] ? `continues a conversation ${what}` : `refuses to load a conversation ${what}, and leaves it as it was`);

  it(continues('that was closed, in a new process'), { timeout: 240_000 }, async () => {
    const { open, home } = setup(tool);
    const a = await open();
    const first = await a.prompt('remember the word pineapple please');
    expect(first.status, dump(first)).toBe('completed');
    const id = a.agentSessionId;
    expect(id).toBeTruthy();
    await a.close();
    if (!RESUMES[tool]) {
      await expectRefusedUnharmed(tool, home, id ?? '', () => open({ resume: id ?? '' }));
      return;
    }
    const b = await open({ resume: id ?? '' });
    expect(b.agentSessionId).toBe(id);
    const turn = await b.prompt('which word did I ask you to remember?');
    expectContinued(b, turn, 'remember the word pineapple', id ?? '');
    expectReplayKeptOut(tool, b);
    expect(b.agentSessionId).toBe(id);
    await closeAll(home, a, b);
  });

  it(continues('whose CLI was killed in the middle of a turn'), { timeout: 240_000 }, async () => {
    const { open, home } = setup(tool);
    const a = await open();
    const held = a.prompt(holdPrompt(tool));
    // The CLI is in the turn (its model request waits at the gate) and has said its id.
    await until(() => scripted.model.heldAt(gateOf(tool)) > 0 && a.agentSessionId !== null, `${tool} to ask the model and say its session id`, 120_000);
    const id = a.agentSessionId ?? '';
    await until(() => conversationSaved(tool, home, id, holdPrompt(tool)), `${tool} to save the prompt in its conversation's file`);
    // Its whole process tree at once, as a crash of the host would leave it: nothing saves on the way out.
    const marked = findProcessesByEnv(MARKER, a.id);
    expect(marked.length).toBeGreaterThan(0);
    // The check closeAll makes of the sandbox home finds the case's processes (it is not empty by mistake).
    expect(findProcessesByEnv('HOME', home).length).toBeGreaterThan(0);
    for (const pid of marked) killGone(pid);
    const died = await held;
    expect(died.status, dump(died)).toBe('failed');
    await a.close();
    if (!RESUMES[tool]) {
      await expectRefusedUnharmed(tool, home, id, () => open({ resume: id }));
      return;
    }
    const b = await open({ resume: id });
    const turn = await b.prompt('which word did I ask you to remember?');
    expectContinued(b, turn, holdPrompt(tool), id);
    expectReplayKeptOut(tool, b);
    await closeAll(home, a, b);
  });

  it('fails the open, in the CLI\'s words, for a conversation it does not know', { timeout: 240_000 }, async () => {
    const { open, home } = setup(tool);
    const unknown = randomUUID();
    const before = mainRequests();
    const refused = await open({ resume: unknown }).catch((err: unknown) => err);
    expect(isSwitchboardError(refused, 'AGENT_ERROR'), String(refused)).toBe(true);
    const expected = refusal(tool, unknown);
    const error = refused as Error & { details?: Record<string, unknown> };
    expect(error.message).toContain(expected);
    // The CLI's reason follows, not an empty one.
    expect(error.message.length).toBeGreaterThan(expected.length + 3);
    expect(error.details).toMatchObject({ agent: tool, resume: unknown });
    // Nothing was asked of the model: no new conversation was started in its place.
    expect(mainRequests()).toBe(before);
    // The open ended what it started before it rejected.
    expect(findProcessesByEnv('HOME', home)).toEqual([]);
  });

  it('refuses an id no CLI would give before it starts anything', async () => {
    const { open, home } = setup(tool);
    for (const bad of ['--help', '', 'a b', `x${'y'.repeat(300)}`]) {
      const refused = await open({ resume: bad }).catch((err: unknown) => err);
      expect(isSwitchboardError(refused, 'INVALID_PARAMS'), `${JSON.stringify(bad)}: ${String(refused)}`).toBe(true);
    }
    expect(findProcessesByEnv('HOME', home)).toEqual([]);
  });
});
