/**
 * The ACP driver with each real ACP agent (Gemini CLI, OpenCode) against the scripted model: two
 * turns in one session and one process; shell and write calls whose permission requests the
 * policy or the caller's callback answer, seen on disk; a model error; a cancelled turn after
 * which the session goes on; an agent that dies mid-turn; and a close that leaves no process.
 *
 * Every message each CLI sends is recorded into test-artifacts/acp/<cli>-<version>/<case>.jsonl, with
 * the temporary folders replaced by fixed paths; `npm run fixtures:update` also keeps it as
 * test/fixtures/acp/<cli>-<version>/<case>.jsonl, once per CLI version (ids and times differ every
 * run, so a tracked recording is kept, not rewritten): the normalizer's unit tests read those.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AcpDriver } from '../../src/drivers/acp-driver.js';
import type { PermissionRequest } from '../../src/drivers/permission.js';
import type { Conversation, ConversationOptions } from '../../src/drivers/conversation.js';
import { isSwitchboardError } from '../../src/core/errors.js';
import type { NormalizedEntry } from '../../src/output/entry.js';
import { findProcessesByEnv } from '../../src/platform/index.js';
import { AUTO_APPROVE_POLICY, ASK_POLICY, type ApprovalPolicy } from '../../src/approvals/policy/index.js';
import { AGENT_BIN_DIRS } from './agent-flow.js';
import { RULES, useScriptedModel } from './scripted-model.js';
import { UPDATE_FIXTURES_ENV } from '../support/screens.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURES = path.join(root, 'test', 'fixtures', 'acp');
const RECORDED = path.join(root, 'test-artifacts', 'acp');
const SESSION_MARKER = 'SWITCHBOARD_SESSION_ID';
const SHELL_COMMAND = 'echo hello-from-tool > tool_out.txt && cat tool_out.txt';


const scripted = useScriptedModel({
  name: 'acp',
  title: 'Scripted ACP sessions',
  rules: [
    // In pieces, so that joining the chunks of one message is part of what is recorded.
    { match: 'say hello', steps: [{ text: 'Hello from the scripted model.', chunk_chars: 8 }] },
    { match: 'say more', steps: [{ text: 'More from the scripted model.', chunk_chars: 8 }] },
    RULES.writeFileByShell,
    { match: 'write a note', steps: [{ tool: 'write', path: 'note.txt', content: 'a note\n' }, { text: 'Done: wrote note.txt.' }] },
    RULES.failNow,
    RULES.takeYourTime,
  ],
});

/** What every CLI message of one case is kept as, once per version. */
class Recording {
  readonly messages: unknown[] = [];
  constructor(
    private readonly replace: [string, string][],
  ) {}

  save(tool: string, version: string, name: string): void {
    let text = this.messages.map((m) => JSON.stringify(m)).join('\n');
    // Paths as JSON writes them, and OpenCode's titles, which give some without their leading slash.
    for (const [from, to] of this.replace) text = text.split(from).join(to).split(from.slice(1)).join(to.slice(1));
    text = `${text.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT')}\n`;
    const write = (dir: string): void => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, `${name}.jsonl`), text);
    };
    write(path.join(RECORDED, `${tool}-${version}`));
    const tracked = path.join(FIXTURES, `${tool}-${version}`);
    if (process.env[UPDATE_FIXTURES_ENV] === '1' && !existsSync(path.join(tracked, `${name}.jsonl`))) write(tracked);
  }
}

interface Case {
  driver: AcpDriver;
  work: string;
  recording: Recording;
  open: (options?: Partial<ConversationOptions>) => Promise<Conversation>;
}

function caseFor(tool: string): Case {
  const home = scripted.tempDir(`sb-acp-${tool}-home-`);
  const work = scripted.tempDir(`sb-acp-${tool}-work-`);
  // Gemini writes an error report into the temporary folder on a model error: this case's own.
  const tmp = scripted.tempDir(`sb-acp-${tool}-tmp-`);
  const recording = new Recording([
    [work.dir, '/home/dev/work'],
    [home.dir, '/home/dev'],
  ]);
  const onMessage = (direction: string, message: unknown): void => {
    if (direction === 'from_agent') recording.messages.push(message);
  };
  const driver = new AcpDriver({ tool, sandbox: { home: home.dir, modelUrl: scripted.model.url }, binaryDirs: AGENT_BIN_DIRS, env: { TMPDIR: tmp.dir }, onMessage });
  return { driver, work: work.dir, recording, open: (options = {}) => driver.open({ cwd: work.dir, policy: AUTO_APPROVE_POLICY, ...options }) };
}

/** Runs `body` with a session, and always closes it. */
async function withSession<T>(c: Case, options: Partial<ConversationOptions>, body: (session: Conversation) => Promise<T>): Promise<T> {
  const session = await c.open(options);
  try {
    return await body(session);
  } finally {
    await session.close();
  }
}

const kinds = (entries: NormalizedEntry[]): string[] => entries.map((e) => e.type).filter((t) => t !== 'system_message' && t !== 'user_message');
const replies = (entries: NormalizedEntry[]): string[] => entries.filter((e) => e.type === 'assistant_message').map((e) => e.content.trim());
const show = (value: unknown): string => JSON.stringify(value, null, 1);
const fileText = (file: string): string | undefined => (existsSync(file) ? readFileSync(file, 'utf8') : undefined);
const askedFor = (text: string): number => scripted.model.modelRequests().filter((r) => r.plan?.role === 'main' && r.plan.prompt.includes(text)).length;

async function until(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const DENY_SHELL: ApprovalPolicy = { rules: [{ decision: 'deny', tool: 'shell', reason: 'no shell commands in this test' }], default: 'ask' };

describe.each(['gemini', 'opencode'])('the ACP driver with %s', (tool) => {
  let version = 'unknown';

  beforeAll(async () => {
    const health = await caseFor(tool).driver.health();
    expect(health, health.problem).toMatchObject({ ok: true });
    version = health.version ?? 'unknown';
  });

  it('knows the CLI and says what it can', () => {
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect(caseFor(tool).driver.capabilities()).toEqual({ format: 'acp', streaming: true, followUps: true, permissionRequests: true, schemaVersions: ['v1', 'v2'] });
  });

  it('answers two prompts in one session, from one process', { timeout: 180_000 }, async () => {
    const c = caseFor(tool);
    await withSession(c, {}, async (session) => {
      expect(session.agentSessionId).toBeTruthy();
      const agentSessionId = session.agentSessionId;
      const first = await session.prompt('say hello please');
      expect(first.status, show(first)).toBe('completed');
      expect(first.stopReason).toBe('end_turn');
      expect(first.entries[0]).toMatchObject({ type: 'user_message', content: 'say hello please' });
      // The reply came in pieces and is one entry.
      expect(replies(first.entries)).toEqual(['Hello from the scripted model.']);
      const pids = findProcessesByEnv(SESSION_MARKER, session.id);
      expect(pids.length).toBeGreaterThan(0);

      const second = session.prompt('say more please');
      // One turn at a time.
      await expect(session.prompt('say hello again')).rejects.toSatisfy((err) => isSwitchboardError(err, 'INVALID_REQUEST'));
      const result = await second;
      expect(result.status, show(result)).toBe('completed');
      expect(replies(result.entries)).toEqual(['More from the scripted model.']);
      expect(session.agentSessionId).toBe(agentSessionId);
      expect(findProcessesByEnv(SESSION_MARKER, session.id)).toEqual(expect.arrayContaining(pids));
      // The same conversation: the model was sent the first reply with the second prompt.
      const secondRequest = scripted.model.modelRequests().find((r) => r.plan?.role === 'main' && r.plan.prompt.includes('say more please'));
      expect(JSON.stringify(secondRequest?.body)).toContain('Hello from the scripted model.');
      // The session's log holds both turns, in order.
      const log = session.entries.history().map((m) => m.msg);
      expect(log.filter((e) => e.type === 'user_message').map((e) => e.content)).toEqual(['say hello please', 'say more please']);
      expect(replies(log)).toEqual(['Hello from the scripted model.', 'More from the scripted model.']);
    });
    c.recording.save(tool, version, 'two-turns');
  });

  it('runs a shell command the policy allows: the call, the decision, its result paired by id, the file', { timeout: 180_000 }, async () => {
    const c = caseFor(tool);
    await withSession(c, { policy: AUTO_APPROVE_POLICY }, async (session) => {
      const result = await session.prompt('write a file please');
      expect(result.status, show(result)).toBe('completed');
      expect(fileText(path.join(c.work, 'tool_out.txt'))).toBe('hello-from-tool\n');
      expect(kinds(result.entries)).toEqual(['command_run', 'tool_result', 'assistant_message']);
      const [call, output] = result.entries.filter((e) => e.type === 'command_run' || e.type === 'tool_result');
      expect(call?.content).toBe(SHELL_COMMAND);
      expect(call?.metadata?.toolCallId).toBeTruthy();
      expect(output?.metadata).toMatchObject({ status: 'success', toolCallId: call?.metadata?.toolCallId });
      expect(result.permissions).toHaveLength(1);
      expect(result.permissions[0]).toMatchObject({ decision: 'allow', decidedBy: 'policy', request: { toolCallId: call?.metadata?.toolCallId, subject: { tool: 'shell', command: SHELL_COMMAND } } });
      const note = result.entries.find((e) => e.type === 'system_message' && e.content.startsWith('permission allowed'));
      expect(note?.content).toContain('inside the workdir');
      expect(note?.metadata?.toolCallId).toBe(call?.metadata?.toolCallId);
      expect(replies(result.entries)).toEqual(['Done: wrote tool_out.txt.']);
    });
    c.recording.save(tool, version, 'shell-allowed');
  });

  it('denies a shell command the policy denies: no file, the answer recorded', { timeout: 180_000 }, async () => {
    const c = caseFor(tool);
    await withSession(c, { policy: DENY_SHELL }, async (session) => {
      const result = await session.prompt('write a file please');
      expect(result.status, show(result)).toBe('completed');
      expect(existsSync(path.join(c.work, 'tool_out.txt'))).toBe(false);
      expect(result.permissions).toHaveLength(1);
      expect(result.permissions[0]).toMatchObject({ decision: 'deny', decidedBy: 'policy', reason: expect.stringContaining('no shell commands in this test') as string });
      expect(result.entries.some((e) => e.type === 'system_message' && e.content.startsWith('permission denied'))).toBe(true);
      expect(kinds(result.entries)[0]).toBe('command_run');
    });
    c.recording.save(tool, version, 'shell-denied');
  });

  it('asks the onPermission callback what the policy leaves open, for a shell command and a file write', { timeout: 180_000 }, async () => {
    const c = caseFor(tool);
    const asked: PermissionRequest[] = [];
    const onPermission = (request: PermissionRequest): Promise<'allow' | 'deny'> => {
      asked.push(request);
      return Promise.resolve('allow');
    };
    await withSession(c, { policy: ASK_POLICY, onPermission }, async (session) => {
      const shell = await session.prompt('write a file please');
      expect(shell.status, show(shell)).toBe('completed');
      expect(fileText(path.join(c.work, 'tool_out.txt'))).toBe('hello-from-tool\n');
      expect(shell.permissions).toMatchObject([{ decision: 'allow', decidedBy: 'callback' }]);
      expect(asked[0]?.subject).toMatchObject({ tool: 'shell', command: SHELL_COMMAND });

      const write = await session.prompt('write a note please');
      expect(write.status, show(write)).toBe('completed');
      expect(fileText(path.join(c.work, 'note.txt'))).toBe('a note\n');
      expect(write.permissions).toMatchObject([{ decision: 'allow', decidedBy: 'callback' }]);
      expect(asked[1]?.subject).toMatchObject({ tool: 'file_edit', path: path.join(c.work, 'note.txt') });
      const edit = write.entries.find((e) => e.type === 'file_edit');
      expect(edit?.metadata?.filePath).toBe(path.join(c.work, 'note.txt'));
      expect(write.entries.find((e) => e.type === 'tool_result')?.metadata).toMatchObject({ status: 'success', toolCallId: edit?.metadata?.toolCallId });
    });
    c.recording.save(tool, version, 'callback-shell-and-write');
  });

  it('reports a model error as a failed turn with an error entry, and goes on', { timeout: 180_000 }, async () => {
    const c = caseFor(tool);
    await withSession(c, {}, async (session) => {
      const failed = await session.prompt('fail now please');
      expect(failed.status, show(failed)).toBe('failed');
      expect(failed.entries.filter((e) => e.type === 'error').map((e) => e.content).join('\n')).toMatch(/scripted failure for the test/);
      const next = await session.prompt('say hello please');
      expect(next.status, show(next)).toBe('completed');
      expect(replies(next.entries)).toEqual(['Hello from the scripted model.']);
    });
    c.recording.save(tool, version, 'model-error');
  });

  it('cancels a slow turn, and the session answers the next prompt', { timeout: 180_000 }, async () => {
    const c = caseFor(tool);
    await withSession(c, {}, async (session) => {
      const before = askedFor('take your time');
      const slow = session.prompt('take your time please');
      // Cancel once the model has the request: the agent is waiting on it.
      await until(() => askedFor('take your time') > before, 'the slow request to reach the model');
      await session.cancelTurn();
      const cancelled = await slow;
      expect(cancelled.status, show(cancelled)).toBe('cancelled');
      expect(cancelled.stopReason).toBe('cancelled');
      const next = await session.prompt('say hello please');
      expect(next.status, show(next)).toBe('completed');
      expect(replies(next.entries)).toEqual(['Hello from the scripted model.']);
    });
    c.recording.save(tool, version, 'cancel');
  });

  it('fails the turn with the stderr tail when the agent dies mid-turn', { timeout: 180_000 }, async () => {
    const c = caseFor(tool);
    await withSession(c, {}, async (session) => {
      const before = askedFor('take your time');
      const slow = session.prompt('take your time please');
      await until(() => askedFor('take your time') > before, 'the slow request to reach the model');
      for (const pid of findProcessesByEnv(SESSION_MARKER, session.id)) process.kill(pid, 'SIGKILL');
      const result = await slow;
      expect(result.status, show(result)).toBe('failed');
      expect(result.entries.find((e) => e.type === 'error')?.content).toMatch(new RegExp(`^${tool} (was ended by SIGKILL|exited with code \\d+) during the turn`));
      await expect(session.prompt('say hello please')).rejects.toSatisfy((err) => isSwitchboardError(err, 'INVALID_REQUEST'));
    });
  });

  it('closes the session and leaves no process behind', { timeout: 180_000 }, async () => {
    const c = caseFor(tool);
    const session = await c.open();
    const result = await session.prompt('say hello please');
    expect(result.status, show(result)).toBe('completed');
    expect(findProcessesByEnv(SESSION_MARKER, session.id).length).toBeGreaterThan(0);
    await session.close();
    expect(findProcessesByEnv(SESSION_MARKER, session.id)).toEqual([]);
    expect(session.entries.finished).toBe(true);
    await expect(session.prompt('say hello please')).rejects.toSatisfy((err) => isSwitchboardError(err, 'INVALID_REQUEST'));
    // Closing again is a no-op.
    await session.close();
  });
});
