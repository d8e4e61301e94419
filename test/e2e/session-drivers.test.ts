/**
 * The multi-turn session drivers with the real CLIs against the scripted model: Claude Code in one
 * stream-json process for the whole session (its permission questions answered by the approval
 * policy, then the callback), Codex through one `codex app-server` (every command and patch asked
 * first, answered by the policy; a dead app server resumed by thread id). Each keeps
 * the conversation across turns, reports a model error as a failed turn, stops a turn on request
 * and leaves no process behind when closed.
 */
import { PINNED } from './pinned.js';
import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isSwitchboardError } from '../../src/core/errors.js';
import { ClaudeConversationDriver } from '../../src/drivers/claude-conversation.js';
import { CodexConversationDriver } from '../../src/drivers/codex-conversation.js';
import type { Conversation, ConversationOptions, ConversationDriver, TurnResult } from '../../src/drivers/conversation.js';
import type { NormalizedEntry } from '../../src/output/entry.js';
import { ModelServer } from '../../src/model-server/index.js';
import { findProcessesByEnv, listProcesses } from '../../src/platform/index.js';
import { AUTO_APPROVE_POLICY, type ApprovalPolicy } from '../../src/approvals/policy/index.js';
import { AGENT_BIN_DIRS } from './agent-flow.js';
import { RULES, useScriptedModel } from './scripted-model.js';
import { until } from '../support/processes.js';

const MARKER = 'SWITCHBOARD_SESSION_ID';
const DENY_ALL: ApprovalPolicy = { rules: [], default: 'deny' };

const sessions: Conversation[] = [];
const STREAMED = 'One two three four five six seven eight nine ten.';
const scripted = useScriptedModel({
  name: 'sessions',
  title: 'Scripted multi-turn sessions',
  rules: [
    { match: 'remember the word', steps: [{ text: 'Noted: the word is pineapple.' }] },
    { match: 'which word', steps: [{ text: 'The word was pineapple.' }] },
    RULES.sayHello,
    RULES.writeFileByShell,
    RULES.failNow,
    RULES.takeYourTime,
    { match: 'remove the file', steps: [{ tool: 'shell', command: 'rm victim.txt', text: 'I will remove it.' }, { text: 'Tool said: {{tool_result}}' }] },
    { match: 'stream it slowly', steps: [{ text: STREAMED, chunk_chars: 8, chunk_delay_ms: 50 }] },
  ],
});

// Before the model stops (this hook runs first): sessions end while their model still answers.
afterAll(async () => {
  for (const s of sessions) await s.close();
});

interface Setup {
  driver: ConversationDriver;
  work: string;
  open: (extra?: Partial<ConversationOptions>) => Promise<Conversation>;
}

function setup(tool: 'claude' | 'codex'): Setup {
  const home = scripted.tempDir(`sb-session-${tool}-home-`);
  const work = scripted.tempDir(`sb-session-${tool}-work-`);
  const driver = tool === 'claude' ? new ClaudeConversationDriver({ binaryDirs: AGENT_BIN_DIRS }) : new CodexConversationDriver({ binaryDirs: AGENT_BIN_DIRS });
  const open = async (extra: Partial<ConversationOptions> = {}): Promise<Conversation> => {
    const session = await driver.open({ cwd: work.dir, sandbox: { home: home.dir, modelUrl: scripted.model.url }, ...extra });
    sessions.push(session);
    return session;
  };
  return { driver, work: work.dir, open };
}

/** The session's own CLI process: the marked process this test process started. */
function cliPid(session: Conversation): number | undefined {
  const marked = new Set(findProcessesByEnv(MARKER, session.id));
  return listProcesses().find((p) => marked.has(p.pid) && p.ppid === process.pid && !p.zombie)?.pid;
}

const requestsFor = (prompt: string): ReturnType<ModelServer['modelRequests']> => scripted.model.modelRequests().filter((r) => r.plan?.prompt.includes(prompt));

/** Waits until the model has one more request for `prompt` than `before`: the CLI is in the turn. */
async function untilModelAsked(prompt: string, before: number): Promise<void> {
  await until(() => requestsFor(prompt).length > before, `the model to be asked about ${prompt}`, 60_000);
  expect(requestsFor(prompt).length).toBeGreaterThan(before);
}

const texts = (result: TurnResult, type: NormalizedEntry['type']): string[] => result.entries.filter((e) => e.type === type).map((e) => e.content.trim());
const dump = (result: TurnResult): string => JSON.stringify(result, null, 1);

/** The second turn relies on the first: the model's request for it carries the first exchange. */
function expectConversationKept(): void {
  const second = requestsFor('which word').at(-1);
  const body = JSON.stringify(second?.body);
  expect(body).toContain('remember the word pineapple');
  expect(body).toContain('Noted: the word is pineapple.');
}

function expectShellPaired(result: TurnResult, work: string): void {
  const call = result.entries.find((e) => e.type === 'command_run');
  const output = result.entries.find((e) => e.type === 'tool_result');
  expect(call?.content).toContain('echo hello-from-tool > tool_out.txt');
  expect(call?.metadata?.toolCallId).toBeTruthy();
  expect(output?.metadata).toMatchObject({ status: 'success', toolCallId: call?.metadata?.toolCallId });
  expect(readFileSync(path.join(work, 'tool_out.txt'), 'utf8')).toBe('hello-from-tool\n');
}

describe('the Claude Code session driver', () => {
  it('knows the CLI and what it can do', async () => {
    const { driver } = setup('claude');
    const health = await driver.health();
    // The version the test line pins (test/agent-clis/package.json).
    expect(health, health.problem).toMatchObject({ ok: true, version: PINNED.claude });
    expect(driver.capabilities()).toMatchObject({ format: 'claude-stream-json', followUps: true, permissionRequests: true, schemaVersions: ['v1', 'v2'] });
  });

  it('keeps one process and one conversation across two turns', { timeout: 180_000 }, async () => {
    const { open } = setup('claude');
    const session = await open();
    const pid = cliPid(session);
    expect(pid).toBeDefined();
    const first = await session.prompt('remember the word pineapple please');
    expect(first.status, dump(first)).toBe('completed');
    expect(texts(first, 'assistant_message')).toContain('Noted: the word is pineapple.');
    expect(first.stopReason).toBe('end_turn');
    const agentSessionId = session.agentSessionId;
    expect(agentSessionId).toMatch(/^[0-9a-f-]{36}$/);
    const second = await session.prompt('which word did I ask you to remember?');
    expect(second.status, dump(second)).toBe('completed');
    expect(texts(second, 'assistant_message')).toContain('The word was pineapple.');
    expect(cliPid(session)).toBe(pid);
    expect(session.agentSessionId).toBe(agentSessionId);
    expectConversationKept();
    // The session's log holds both turns, the prompts included, with unique ids.
    const log = session.entries.history().map((m) => m.msg);
    expect(log.filter((e) => e.type === 'user_message').map((e) => e.content)).toEqual(['remember the word pineapple please', 'which word did I ask you to remember?']);
    expect(new Set(log.map((e) => e.id)).size).toBe(log.length);
    expect(log.some((e) => e.type === 'raw')).toBe(false);
    await session.close();
  });

  it('runs a shell command the policy allows', { timeout: 180_000 }, async () => {
    const { open, work } = setup('claude');
    const session = await open({ policy: AUTO_APPROVE_POLICY });
    const result = await session.prompt('write a file please');
    expect(result.status, dump(result)).toBe('completed');
    expectShellPaired(result, work);
    expect(result.permissions).toHaveLength(1);
    expect(result.permissions[0]).toMatchObject({ decision: 'allow', decidedBy: 'policy', request: { toolName: 'Bash', subject: { tool: 'shell' } } });
    expect(result.permissions[0]?.request.toolCallId).toBe(result.entries.find((e) => e.type === 'command_run')?.metadata?.toolCallId);
    expect(texts(result, 'assistant_message')).toContain('Done: wrote tool_out.txt.');
    await session.close();
  });

  it('refuses a shell command the policy denies', { timeout: 180_000 }, async () => {
    const { open, work } = setup('claude');
    const session = await open({ policy: DENY_ALL });
    const result = await session.prompt('write a file please');
    expect(result.status, dump(result)).toBe('completed');
    expect(existsSync(path.join(work, 'tool_out.txt'))).toBe(false);
    expect(result.permissions.map((p) => [p.decision, p.decidedBy])).toEqual([['deny', 'policy']]);
    expect(result.entries.find((e) => e.type === 'tool_result')?.metadata?.status).toBe('failed');
    await session.close();
  });

  it('asks the onPermission callback what the policy leaves open', { timeout: 180_000 }, async () => {
    const { open, work } = setup('claude');
    const asked: string[] = [];
    const session = await open({
      onPermission: (request) => {
        asked.push(`${request.toolName}: ${request.subject.command ?? ''}`);
        return Promise.resolve('allow');
      },
    });
    const result = await session.prompt('write a file please');
    expect(result.status, dump(result)).toBe('completed');
    expect(asked).toEqual(['Bash: echo hello-from-tool > tool_out.txt && cat tool_out.txt']);
    expect(result.permissions.map((p) => [p.decision, p.decidedBy])).toEqual([['allow', 'callback']]);
    expectShellPaired(result, work);
    await session.close();
  });

  it('reports a model error as a failed turn, and the session goes on', { timeout: 180_000 }, async () => {
    const { open } = setup('claude');
    const session = await open();
    const failed = await session.prompt('fail now please');
    expect(failed.status, dump(failed)).toBe('failed');
    expect(texts(failed, 'error').join('\n')).toMatch(/scripted failure for the test/);
    const next = await session.prompt('say hello please');
    expect(next.status, dump(next)).toBe('completed');
    await session.close();
  });

  it('cancels a slow turn and answers the next prompt in the same process', { timeout: 180_000 }, async () => {
    const { open } = setup('claude');
    const session = await open();
    const pid = cliPid(session);
    const before = requestsFor('take your time').length;
    const slow = session.prompt('take your time please');
    await untilModelAsked('take your time', before);
    await session.cancelTurn();
    const cancelled = await slow;
    expect(cancelled.status, dump(cancelled)).toBe('cancelled');
    expect(cancelled.entries.some((e) => e.type === 'error')).toBe(false);
    const next = await session.prompt('say hello please');
    expect(next.status, dump(next)).toBe('completed');
    expect(texts(next, 'assistant_message')).toContain('Hello from the scripted model.');
    expect(cliPid(session)).toBe(pid);
    await session.close();
  });

  it('cancels a turn while a permission question waits for the callback', { timeout: 180_000 }, async () => {
    const { open, work } = setup('claude');
    let asked: () => void = () => undefined;
    const questionAsked = new Promise<void>((resolve) => (asked = resolve));
    let answer: (decision: 'allow' | 'deny') => void = () => undefined;
    const session = await open({
      onPermission: () => {
        asked();
        return new Promise((resolve) => (answer = resolve));
      },
    });
    const turn = session.prompt('write a file please');
    await questionAsked;
    await session.cancelTurn();
    const cancelled = await turn;
    expect(cancelled.status, dump(cancelled)).toBe('cancelled');
    // The CLI withdrew the question: a late answer is not sent, nor counted.
    answer('allow');
    expect(cancelled.permissions).toEqual([]);
    expect(existsSync(path.join(work, 'tool_out.txt'))).toBe(false);
    const next = await session.prompt('say hello please');
    expect(next.status, dump(next)).toBe('completed');
    expect(next.permissions).toEqual([]);
    await session.close();
  });

  it('fails the turn when the CLI dies in it, and resumes the conversation in a new process', { timeout: 180_000 }, async () => {
    const { open } = setup('claude');
    const session = await open();
    expect((await session.prompt('remember the word pineapple please')).status).toBe('completed');
    const pid = cliPid(session);
    expect(pid).toBeDefined();
    const before = requestsFor('take your time').length;
    const slow = session.prompt('take your time please');
    await untilModelAsked('take your time', before);
    process.kill(pid ?? 0, 'SIGKILL');
    const died = await slow;
    expect(died.status, dump(died)).toBe('failed');
    expect(texts(died, 'error').join('\n')).toMatch(/SIGKILL/);
    const next = await session.prompt('which word did I ask you to remember?');
    expect(next.status, dump(next)).toBe('completed');
    expect(cliPid(session)).not.toBe(pid);
    expect(requestsFor('which word').at(-1)?.body).toBeDefined();
    expect(JSON.stringify(requestsFor('which word').at(-1)?.body)).toContain('remember the word pineapple');
    await session.close();
  });

  it('closes with no process left, and refuses prompts after', { timeout: 180_000 }, async () => {
    const { open } = setup('claude');
    const session = await open();
    const before = requestsFor('take your time').length;
    const slow = session.prompt('take your time please');
    await untilModelAsked('take your time', before);
    expect(findProcessesByEnv(MARKER, session.id).length).toBeGreaterThan(0);
    await session.close();
    expect((await slow).status).toBe('cancelled');
    expect(findProcessesByEnv(MARKER, session.id)).toEqual([]);
    expect(session.entries.finished).toBe(true);
    const refused = await session.prompt('say hello please').catch((err: unknown) => err);
    expect(isSwitchboardError(refused, 'INVALID_REQUEST')).toBe(true);
  });
});

describe('the Codex session driver', () => {
  it('knows the CLI and what it can do', async () => {
    const { driver } = setup('codex');
    const health = await driver.health();
    expect(health, health.problem).toMatchObject({ ok: true, version: PINNED.codex });
    expect(driver.capabilities()).toMatchObject({ format: 'codex-app-server', followUps: true, permissionRequests: true });
  });

  it('keeps one app server and one thread across two turns', { timeout: 180_000 }, async () => {
    const { open } = setup('codex');
    const session = await open();
    const threadId = session.agentSessionId;
    expect(threadId).toMatch(/^[0-9a-f-]{36}$/);
    const pid = cliPid(session);
    expect(pid).toBeDefined();
    const first = await session.prompt('remember the word pineapple please');
    expect(first.status, dump(first)).toBe('completed');
    expect(texts(first, 'assistant_message')).toContain('Noted: the word is pineapple.');
    // Starting with a dash: a prompt still, never a flag.
    const second = await session.prompt('-- which word did I ask you to remember?');
    expect(second.status, dump(second)).toBe('completed');
    expect(texts(second, 'assistant_message')).toContain('The word was pineapple.');
    expect(session.agentSessionId).toBe(threadId);
    expect(cliPid(session)).toBe(pid);
    expectConversationKept();
    await session.close();
    expect(findProcessesByEnv(MARKER, session.id)).toEqual([]);
  });

  it('asks before every command: the policy allows, the command runs; ids unique in the session', { timeout: 180_000 }, async () => {
    const { open, work } = setup('codex');
    const session = await open({ policy: AUTO_APPROVE_POLICY });
    const first = await session.prompt('write a file please');
    expect(first.status, dump(first)).toBe('completed');
    expectShellPaired(first, work);
    expect(first.permissions).toHaveLength(1);
    expect(first.permissions[0]).toMatchObject({ decision: 'allow', decidedBy: 'policy', request: { toolName: 'shell', subject: { tool: 'shell' } } });
    const second = await session.prompt('write a file please, again');
    expect(second.status, dump(second)).toBe('completed');
    expectShellPaired(second, work);
    const log = session.entries.history().map((m) => m.msg);
    expect(new Set(log.map((e) => e.id)).size).toBe(log.length);
    const callIds = log.filter((e) => e.type === 'command_run').map((e) => e.metadata?.toolCallId);
    expect(callIds).toHaveLength(2);
    expect(new Set(callIds).size).toBe(2);
    await session.close();
  });

  it('declines a command the policy denies before it runs: the file survives', { timeout: 180_000 }, async () => {
    const { open, work } = setup('codex');
    writeFileSync(path.join(work, 'victim.txt'), 'keep me\n');
    const session = await open({ policy: { rules: [{ tool: 'shell', command: '^rm ', decision: 'deny', reason: 'no removing here' }], default: 'allow' } });
    const result = await session.prompt('remove the file please');
    expect(readFileSync(path.join(work, 'victim.txt'), 'utf8')).toBe('keep me\n');
    expect(result.permissions).toHaveLength(1);
    expect(result.permissions[0]).toMatchObject({ decision: 'deny', decidedBy: 'policy', request: { subject: { tool: 'shell', command: expect.stringContaining('rm victim.txt') as string } } });
    const output = result.entries.find((e) => e.type === 'tool_result');
    expect(output?.metadata).toMatchObject({ status: 'failed' });
    // Codex goes on after a declined command: the turn itself is not a failure of the CLI's.
    expect(result.status, dump(result)).toBe('completed');
    await session.close();
  });

  it('streams the reply in pieces before the turn ends', { timeout: 180_000 }, async () => {
    const { open } = setup('codex');
    const session = await open();
    const pieces: string[] = [];
    let ended = false;
    let piecesBeforeEnd = 0;
    session.pieces?.((p) => {
      pieces.push(p.text);
      if (!ended) piecesBeforeEnd++;
    });
    const result = await session.prompt('stream it slowly please');
    ended = true;
    expect(result.status, dump(result)).toBe('completed');
    expect(pieces.join('')).toBe(STREAMED);
    expect(piecesBeforeEnd).toBeGreaterThan(1);
    expect(texts(result, 'assistant_message')).toContain(STREAMED);
    await session.close();
  });

  it('reports a model error as a failed turn', { timeout: 180_000 }, async () => {
    const { open } = setup('codex');
    const session = await open();
    const failed = await session.prompt('fail now please');
    expect(failed.status, dump(failed)).toBe('failed');
    expect(texts(failed, 'error').join('\n')).toMatch(/scripted failure for the test/);
    await session.close();
  });

  it('cancels a slow turn with turn/interrupt: the same app server answers the next prompt', { timeout: 180_000 }, async () => {
    const { open } = setup('codex');
    const session = await open();
    const pid = cliPid(session);
    expect((await session.prompt('say hello please')).status).toBe('completed');
    const before = requestsFor('take your time').length;
    const slow = session.prompt('take your time please');
    await untilModelAsked('take your time', before);
    await session.cancelTurn();
    expect((await slow).status).toBe('cancelled');
    const next = await session.prompt('say hello please');
    expect(next.status, dump(next)).toBe('completed');
    expect(cliPid(session)).toBe(pid);
    await session.close();
    expect(findProcessesByEnv(MARKER, session.id)).toEqual([]);
    expect(session.entries.finished).toBe(true);
  });

  it('resumes its thread in a new app server when the old one died between turns', { timeout: 180_000 }, async () => {
    const { open } = setup('codex');
    const session = await open();
    const first = await session.prompt('remember the word pineapple please');
    expect(first.status, dump(first)).toBe('completed');
    const threadId = session.agentSessionId;
    const pid = cliPid(session);
    expect(pid).toBeDefined();
    process.kill(pid as number, 'SIGKILL');
    await until(() => session.entries.history().some((m) => m.msg.content.includes('between turns')), 'the session to see its app server gone');
    const second = await session.prompt('which word did I ask you to remember?');
    expect(second.status, dump(second)).toBe('completed');
    expect(texts(second, 'assistant_message')).toContain('The word was pineapple.');
    expect(session.agentSessionId).toBe(threadId);
    expectConversationKept();
    await session.close();
    expect(findProcessesByEnv(MARKER, session.id)).toEqual([]);
  });
});

/**
 * A stand-in for Claude Code that speaks the same stream-json protocol, for what the real CLI will
 * not do on request: send a control request the driver does not know, crash mid-turn, stop reading
 * its input, fail to start.
 */
const STAND_IN = `
const readline = require('node:readline');
if (process.env.STANDIN_FAIL_START) { process.stderr.write('stand-in: cannot start\\n'); process.exit(2); }
// As Claude Code 2.1.330 does when another Claude process of its HOME is writing ~/.claude.json as it reads it.
const failOnce = process.env.STANDIN_FAIL_FIRST_START;
if (failOnce && !require('node:fs').existsSync(failOnce)) {
  require('node:fs').writeFileSync(failOnce, '');
  process.stderr.write('Claude configuration file at ~/.claude.json is corrupted: JSON Parse error: Unexpected EOF\\n');
  process.exit(1);
}
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const session = process.argv.includes('--resume') ? process.argv[process.argv.indexOf('--resume') + 1] : 'standin-' + process.pid;
// As Claude Code 2.1.330 does when asked to resume a conversation it never saved (killed before it wrote its transcript).
const unsaved = require('node:path').join(process.cwd(), 'unsaved-' + session);
if (process.argv.includes('--resume') && require('node:fs').existsSync(unsaved)) {
  process.stderr.write('No conversation found with session ID: ' + session + '\\n');
  out({ type: 'result', subtype: 'error_during_execution', is_error: true, num_turns: 0, stop_reason: null, session_id: session, errors: ['No conversation found with session ID: ' + session] });
  process.exit(1);
}
const waiting = new Map();
setInterval(() => undefined, 60000);
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.type === 'control_request' && msg.request.subtype === 'initialize') return out({ type: 'control_response', response: { subtype: 'success', request_id: msg.request_id, response: {} } });
  if (msg.type === 'control_response') return waiting.get(msg.response.request_id)?.(msg.response);
  if (msg.type !== 'user') return;
  const text = msg.message.content[0].text;
  const say = (t) => out({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: t }] }, session_id: session });
  const done = () => out({ type: 'result', subtype: 'success', is_error: false, result: '', stop_reason: 'end_turn', session_id: session });
  out({ type: 'system', subtype: 'init', session_id: session, model: 'stand-in', cwd: process.cwd() });
  if (text.includes('unknown request')) {
    waiting.set('cli-1', (r) => { say('answer: ' + r.subtype + ': ' + r.error); done(); });
    return out({ type: 'control_request', request_id: 'cli-1', request: { subtype: 'hook_callback', callback_id: 'cb-1' } });
  }
  if (text.includes('crash before saving')) { require('node:fs').writeFileSync(unsaved, ''); process.exit(9); }
  if (text.includes('crash')) { process.stderr.write('stand-in: crashed on purpose\\n'); process.exit(3); }
  if (text.includes('stop reading')) {
    // Closes the read end for good before the turn ends, so that the next write fails with EPIPE.
    process.stdin.destroy();
    try { require('node:fs').closeSync(0); } catch {}
    say('no longer reading');
    return done();
  }
  say('echo: ' + text + ' (resumed: ' + process.argv.includes('--resume') + ')');
  done();
});
`;

describe('the Claude Code session driver with a stand-in CLI', () => {
  function standIn(): { work: string; bin: string } {
    const dir = scripted.tempDir('sb-session-standin-');
    const bin = path.join(dir.dir, 'claude-standin.cjs');
    writeFileSync(bin, `#!${process.execPath}\n${STAND_IN}`);
    chmodSync(bin, 0o755);
    return { work: dir.dir, bin };
  }
  const driver = new ClaudeConversationDriver({ binaryDirs: [] });
  const openStandIn = async (env: Record<string, string> = {}): Promise<Conversation> => {
    const { work, bin } = standIn();
    const session = await driver.open({ cwd: work, env: { SWITCHBOARD_CLAUDE_BIN: bin, ...env } });
    sessions.push(session);
    return session;
  };

  it('answers a control request it does not know with an error, and the turn goes on', { timeout: 60_000 }, async () => {
    const session = await openStandIn();
    const result = await session.prompt('send an unknown request');
    expect(result.status, dump(result)).toBe('completed');
    expect(texts(result, 'assistant_message')).toEqual(['answer: error: Switchboard does not handle hook_callback requests']);
    expect(result.entries.some((e) => e.type === 'raw')).toBe(false);
    await session.close();
  });

  it('fails the turn of a CLI that exits in it, with the stderr tail, then resumes in a new process', { timeout: 60_000 }, async () => {
    const session = await openStandIn();
    expect((await session.prompt('hello')).status).toBe('completed');
    const agentSessionId = session.agentSessionId;
    const crashed = await session.prompt('crash now');
    expect(crashed.status, dump(crashed)).toBe('failed');
    expect(crashed.stopReason).toBe('exited');
    expect(texts(crashed, 'error').join('\n')).toMatch(/exited with code 3 in the middle of the turn; stderr: stand-in: crashed on purpose/);
    const next = await session.prompt('are you back?');
    expect(next.status, dump(next)).toBe('completed');
    expect(texts(next, 'assistant_message')).toEqual(['echo: are you back? (resumed: true)']);
    expect(session.agentSessionId).toBe(agentSessionId);
    await session.close();
    expect(findProcessesByEnv(MARKER, session.id)).toEqual([]);
  });

  it('starts a new conversation, and says so, when the CLI died before it saved the one to resume', { timeout: 60_000 }, async () => {
    const session = await openStandIn();
    expect((await session.prompt('hello')).status).toBe('completed');
    const unsaved = session.agentSessionId;
    const crashed = await session.prompt('crash before saving');
    expect(crashed.status, dump(crashed)).toBe('failed');
    const next = await session.prompt('are you back?');
    expect(next.status, dump(next)).toBe('completed');
    expect(texts(next, 'assistant_message')).toEqual(['echo: are you back? (resumed: false)']);
    expect(texts(next, 'system_message').join('\n')).toContain(`could not resume conversation ${unsaved ?? ''} (No conversation found with session ID: ${unsaved ?? ''}); starting a new conversation`);
    expect(texts(next, 'error')).toEqual([]);
    expect(session.agentSessionId).not.toBe(unsaved);
    // The new conversation is the one resumed from now on.
    const fresh = session.agentSessionId;
    expect((await session.prompt('crash now')).status).toBe('failed');
    expect(texts(await session.prompt('still there?'), 'assistant_message')).toEqual(['echo: still there? (resumed: true)']);
    expect(session.agentSessionId).toBe(fresh);
    await session.close();
    expect(findProcessesByEnv(MARKER, session.id)).toEqual([]);
  });

  it('fails the turn of a CLI that stopped reading its input (EPIPE), without crashing the host', { timeout: 60_000 }, async () => {
    const session = await openStandIn();
    expect((await session.prompt('stop reading now')).status).toBe('completed');
    const lost = await session.prompt('can you hear me?');
    expect(lost.status, dump(lost)).toBe('failed');
    expect(texts(lost, 'error').join('\n')).toMatch(/stopped reading its input/);
    const next = await session.prompt('and now?');
    expect(next.status, dump(next)).toBe('completed');
    await session.close();
  });

  it('starts a CLI that ended before its handshake once more, and says so (a HOME whose config another process was writing)', { timeout: 60_000 }, async () => {
    const flag = path.join(scripted.tempDir('sb-session-standin-flag-').dir, 'failed-once');
    const session = await openStandIn({ STANDIN_FAIL_FIRST_START: flag });
    const result = await session.prompt('hello');
    expect(result.status, dump(result)).toBe('completed');
    expect(existsSync(flag)).toBe(true);
    const said = session.entries.history().map((m) => m.msg).filter((e) => e.type === 'system_message').map((e) => e.content);
    expect(said.join('\n')).toMatch(/claude exited with code 1 before it was ready; stderr: Claude configuration file at .* is corrupted.*; starting it once more/);
    await session.close();
    expect(findProcessesByEnv(MARKER, session.id)).toEqual([]);
  });

  it('says why a session cannot open', { timeout: 60_000 }, async () => {
    const failing = await openStandIn({ STANDIN_FAIL_START: '1' }).catch((err: unknown) => err);
    expect(isSwitchboardError(failing, 'SPAWN_FAILED'), String(failing)).toBe(true);
    expect((failing as Error).message).toMatch(/exited with code 2 before it was ready; stderr: stand-in: cannot start/);
    const missing = await driver.open({ cwd: standIn().work, env: { SWITCHBOARD_CLAUDE_BIN: '/nonexistent/claude' } }).catch((err: unknown) => err);
    expect(isSwitchboardError(missing, 'SPAWN_FAILED'), String(missing)).toBe(true);
    const nowhere = await driver.open({ cwd: '/nonexistent/folder', env: { SWITCHBOARD_CLAUDE_BIN: standIn().bin } }).catch((err: unknown) => err);
    expect(isSwitchboardError(nowhere, 'INVALID_PARAMS'), String(nowhere)).toBe(true);
  });
});
