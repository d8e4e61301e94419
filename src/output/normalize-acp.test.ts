import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NormalizedEntry } from './entry.js';
import { AcpUpdateNormalizer, describeAcpError, entryTypeForAcpKind } from './normalize-acp.js';

/** What test/e2e/acp-driver.test.ts recorded: every message each CLI sent, one case per file. */
const recorded = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'fixtures', 'acp');
const GEMINI = 'gemini-0.61.0';
const OPENCODE = 'opencode-1.18.33';
const SHELL_COMMAND = 'echo hello-from-tool > tool_out.txt && cat tool_out.txt';

function replay(cli: string, name: string): { entries: NormalizedEntry[]; normalizer: AcpUpdateNormalizer } {
  const normalizer = new AcpUpdateNormalizer(() => 1_000);
  const lines = readFileSync(path.join(recorded, cli, `${name}.jsonl`), 'utf8').split('\n');
  return { entries: [...lines.flatMap((line) => normalizer.line(line)), ...normalizer.end()], normalizer };
}

const shape = (entries: NormalizedEntry[]): unknown[] => entries.map((e) => [e.type, e.metadata?.status ?? null, e.metadata?.toolName ?? null]);

function expectPaired(entries: NormalizedEntry[]): void {
  const calls = new Set(entries.filter((e) => e.type !== 'tool_result' && e.metadata?.toolCallId).map((e) => e.metadata?.toolCallId));
  const results = entries.filter((e) => e.type === 'tool_result');
  for (const result of results) expect(calls.has(result.metadata?.toolCallId)).toBe(true);
}

/** A session/update notification as the agents send it. */
const update = (fields: Record<string, unknown>): string => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's1', update: fields } });
const chunk = (sessionUpdate: string, text: string, messageId?: string): string => update({ sessionUpdate, content: { type: 'text', text }, ...(messageId ? { messageId } : {}) });
const feed = (normalizer: AcpUpdateNormalizer, lines: string[]): NormalizedEntry[] => [...lines.flatMap((l) => normalizer.line(l)), ...normalizer.end()];

describe.each([GEMINI, OPENCODE])('ACP updates recorded from %s', (cli) => {
  it('two turns: each reply streamed in pieces is one message', () => {
    const { entries, normalizer } = replay(cli, 'two-turns');
    expect(entries.map((e) => [e.type, e.content])).toEqual([
      ['assistant_message', 'Hello from the scripted model.'],
      ['assistant_message', 'More from the scripted model.'],
    ]);
    expect(normalizer.unparsed).toBe(0);
  });

  it('a shell command allowed: the call with its command, its result paired by id, the reply', () => {
    const { entries } = replay(cli, 'shell-allowed');
    expect(entries.map((e) => e.type)).toEqual(['command_run', 'tool_result', 'assistant_message']);
    expect(entries[0]?.content).toBe(SHELL_COMMAND);
    expect(entries[1]?.metadata).toMatchObject({ status: 'success', toolName: 'execute', toolCallId: entries[0]?.metadata?.toolCallId });
    expect(entries[2]?.content).toBe('Done: wrote tool_out.txt.');
    expectPaired(entries);
  });

  it('a model error: the error in its own words, then the next turn', () => {
    const { entries } = replay(cli, 'model-error');
    expect(entries.map((e) => e.type)).toEqual(['error', 'assistant_message']);
    expect(entries[0]?.content).toMatch(/^(Internal error: )?scripted failure for the test \(code -?\d+\)$/);
  });

  it('a cancelled turn says nothing; the next one answers', () => {
    const { entries } = replay(cli, 'cancel');
    expect(entries.map((e) => [e.type, e.content])).toEqual([['assistant_message', 'Hello from the scripted model.']]);
  });

  it('a shell command and a file write, each with its result', () => {
    const { entries } = replay(cli, 'callback-shell-and-write');
    expect(entries.map((e) => e.type)).toEqual(['command_run', 'tool_result', 'assistant_message', 'file_edit', 'tool_result', 'assistant_message']);
    const edit = entries[3];
    expect(edit?.content).toBe('/home/dev/work/note.txt');
    expect(edit?.metadata).toMatchObject({ toolName: 'edit', filePath: '/home/dev/work/note.txt' });
    expect(entries[4]?.metadata).toMatchObject({ status: 'success', toolCallId: edit?.metadata?.toolCallId });
    expectPaired(entries);
  });
});

describe('what differs between the two CLIs', () => {
  it('Gemini announces a shell call only in its permission request, with no input: the title is the command', () => {
    const { entries } = replay(GEMINI, 'shell-allowed');
    expect(shape(entries)).toEqual([
      ['command_run', 'pending', 'execute'],
      ['tool_result', 'success', 'execute'],
      ['assistant_message', null, null],
    ]);
    expect(entries[0]?.metadata?.toolInput).toBeUndefined();
    // Gemini 0.61 sends no output for a shell call.
    expect(entries[1]?.content).toBe('');
  });

  it('Gemini sends nothing for a call it was refused: the call stands alone', () => {
    const { entries } = replay(GEMINI, 'shell-denied');
    expect(entries.map((e) => e.type)).toEqual(['command_run', 'assistant_message']);
  });

  it('OpenCode announces "bash" with only a cwd: the call is held until the command is known', () => {
    const { entries } = replay(OPENCODE, 'shell-allowed');
    expect(shape(entries)).toEqual([
      ['command_run', 'running', 'execute'],
      ['tool_result', 'success', 'execute'],
      ['assistant_message', null, null],
    ]);
    expect(entries[0]?.metadata?.toolInput).toMatchObject({ command: SHELL_COMMAND });
    expect(entries[1]).toMatchObject({ content: 'hello-from-tool\n', metadata: { toolOutput: 'hello-from-tool\n', exitCode: 0 } });
  });

  it('OpenCode reports a refused call as a failed result', () => {
    const { entries } = replay(OPENCODE, 'shell-denied');
    expect(shape(entries)).toEqual([
      ['command_run', 'running', 'execute'],
      ['tool_result', 'failed', 'execute'],
    ]);
    expect(entries[1]?.content).toMatch(/rejected permission/);
  });
});

// Not recorded: the scripted model sends no thoughts or plans, and agents send user chunks only when
// replaying a loaded session. These are built from the ACP schema.
describe('ACP updates the recordings do not have', () => {
  it('joins thought chunks into one system message and user chunks into one user message', () => {
    const entries = feed(new AcpUpdateNormalizer(), [chunk('user_message_chunk', 'do '), chunk('user_message_chunk', 'it'), chunk('agent_thought_chunk', 'Let me '), chunk('agent_thought_chunk', 'think.'), chunk('agent_message_chunk', 'Done.')]);
    expect(entries.map((e) => [e.type, e.content])).toEqual([
      ['user_message', 'do it'],
      ['system_message', 'thought: Let me think.'],
      ['assistant_message', 'Done.'],
    ]);
  });

  it('splits messages where the messageId changes, and is not split by updates that say nothing', () => {
    const quiet = update({ sessionUpdate: 'usage_update', used: 1, size: 2 });
    const entries = feed(new AcpUpdateNormalizer(), [chunk('agent_message_chunk', 'one ', 'm1'), quiet, chunk('agent_message_chunk', 'message', 'm1'), chunk('agent_message_chunk', 'two', 'm2')]);
    expect(entries.map((e) => e.content)).toEqual(['one message', 'two']);
  });

  it('hands out the reply\u2019s pieces as they come (not thoughts, not the user\u2019s), each once, while still joining the message', () => {
    const n = new AcpUpdateNormalizer(Date.now, { pieces: true });
    const taken: string[][] = [];
    for (const line of [chunk('agent_thought_chunk', 'hmm'), chunk('agent_message_chunk', 'one '), chunk('agent_message_chunk', 'two'), chunk('user_message_chunk', 'x')]) {
      n.line(line);
      taken.push(n.takePieces());
    }
    expect(taken).toEqual([[], ['one '], ['two'], []]);
    // Not asked for, none are kept.
    const quiet = new AcpUpdateNormalizer();
    quiet.line(chunk('agent_message_chunk', 'one '));
    expect(quiet.takePieces()).toEqual([]);
    expect(feed(new AcpUpdateNormalizer(), [chunk('agent_message_chunk', 'one '), chunk('agent_message_chunk', 'two')]).map((e) => e.content)).toEqual(['one two']);
  });

  it('gives a plan as a system message listing its steps', () => {
    const plan = update({ sessionUpdate: 'plan', entries: [{ content: 'read the code', priority: 'high', status: 'completed' }, { content: 'fix it', priority: 'high', status: 'pending' }] });
    const entries = feed(new AcpUpdateNormalizer(), [plan]);
    expect(entries).toMatchObject([{ type: 'system_message', content: 'plan:\n- [completed] read the code\n- [pending] fix it' }]);
  });

  it('makes the call from an update for a call never announced, then its result', () => {
    const done = update({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'completed', kind: 'read', title: 'Read a.txt', locations: [{ path: '/w/a.txt' }], content: [{ type: 'content', content: { type: 'text', text: 'hello' } }] });
    const entries = feed(new AcpUpdateNormalizer(), [done]);
    expect(shape(entries)).toEqual([
      ['file_read', 'success', 'read'],
      ['tool_result', 'success', 'read'],
    ]);
    expect(entries[0]?.metadata?.filePath).toBe('/w/a.txt');
    expect(entries[1]?.content).toBe('hello');
  });

  it('gives a held call out when something else arrives, so the order is kept', () => {
    const call = update({ sessionUpdate: 'tool_call', toolCallId: 't1', status: 'pending', kind: 'search', title: 'Find TODOs' });
    const entries = feed(new AcpUpdateNormalizer(), [call, chunk('agent_message_chunk', 'Searching.')]);
    expect(entries.map((e) => [e.type, e.content])).toEqual([
      ['tool_use', 'Find TODOs'],
      ['assistant_message', 'Searching.'],
    ]);
  });

  it('keeps what it cannot read: a line that is not JSON, an update with no kind, a kind newer than itself', () => {
    const normalizer = new AcpUpdateNormalizer();
    const entries = feed(normalizer, ['not json', JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's1' } }), update({ sessionUpdate: 'brand_new_update' })]);
    expect(entries.map((e) => [e.type, e.content])).toEqual([
      ['raw', 'not json'],
      ['raw', '{"sessionId":"s1"}'],
      ['system_message', 'session update: brand_new_update'],
    ]);
    expect(normalizer.unparsed).toBe(2);
  });

  it('puts the prompt first and an error last, after what was held', () => {
    const normalizer = new AcpUpdateNormalizer();
    const entries = [...normalizer.userPrompt('hi'), ...normalizer.line(chunk('agent_message_chunk', 'partial')), ...normalizer.turnFailed('gone')];
    expect(entries.map((e) => [e.type, e.content])).toEqual([
      ['user_message', 'hi'],
      ['assistant_message', 'partial'],
      ['error', 'gone'],
    ]);
  });
});

describe('ACP kinds and errors', () => {
  it('maps tool kinds to entry types, reading the title only when the kind says nothing', () => {
    expect(['execute', 'edit', 'delete', 'move', 'read', 'search', 'fetch', 'think', 'switch_mode'].map((k) => entryTypeForAcpKind(k))).toEqual(['command_run', 'file_edit', 'file_edit', 'file_edit', 'file_read', 'tool_use', 'tool_use', 'tool_use', 'tool_use']);
    expect(entryTypeForAcpKind('other', 'bash')).toBe('command_run');
    expect(entryTypeForAcpKind(undefined, 'write_file')).toBe('file_edit');
    expect(entryTypeForAcpKind(undefined)).toBe('tool_use');
  });

  it('reads the API error Gemini wraps in its message', () => {
    expect(describeAcpError({ code: 400, message: '{"error":{"code":400,"message":"quota exceeded","status":"RESOURCE_EXHAUSTED"}}' })).toBe('quota exceeded (code 400)');
    expect(describeAcpError({ code: -32603, message: 'Internal error: boom' })).toBe('Internal error: boom (code -32603)');
  });
});
