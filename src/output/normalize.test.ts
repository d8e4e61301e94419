import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NormalizedEntry, Normalizer } from './entry.js';
import { ClaudeStreamJsonNormalizer } from './normalize-claude.js';
import { CodexExecJsonNormalizer } from './normalize-codex.js';
import { GeminiStreamJsonNormalizer } from './normalize-gemini.js';
import { OpenCodeJsonNormalizer } from './normalize-opencode.js';

const captures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'fixtures', 'cli-captures');
const run = (normalizer: Normalizer, file: string): NormalizedEntry[] => [...readFileSync(path.join(captures, file), 'utf8').split('\n').flatMap((l) => normalizer.line(l)), ...(normalizer.end?.() ?? [])];
/** The shape of a sequence: type, and what matters of each entry. */
const shape = (entries: NormalizedEntry[]): unknown[] => entries.map((e) => [e.type, e.metadata?.status ?? null, e.metadata?.toolName ?? null]);
const fixedClock = (): number => 1_000;

function expectPaired(entries: NormalizedEntry[]): void {
  const calls = new Set(entries.filter((e) => e.type !== 'tool_result' && e.metadata?.toolCallId).map((e) => e.metadata?.toolCallId));
  for (const result of entries.filter((e) => e.type === 'tool_result')) expect(calls.has(result.metadata?.toolCallId)).toBe(true);
}

describe("Claude Code's stream-json, recorded from the real CLI", () => {
  it('a text reply', () => {
    const entries = run(new ClaudeStreamJsonNormalizer(fixedClock), 'claude-headless-text.jsonl');
    expect(shape(entries)).toEqual([
      ['system_message', null, null],
      ['assistant_message', null, null],
    ]);
    expect(entries[0]?.content).toMatch(/^session started: claude-opus-4-8\[1m\] in \/home\/dev\/work-claude$/);
    expect(entries[1]?.content).toBe('Hello from fake model');
  });

  it('a streamed text reply yields the message once, not its pieces', () => {
    const entries = run(new ClaudeStreamJsonNormalizer(fixedClock), 'claude-headless-text-partial.jsonl');
    expect(entries.filter((e) => e.type === 'assistant_message').map((e) => e.content)).toEqual(['Hello from fake model']);
  });

  it('a shell command and its result, paired by id, then the final reply', () => {
    const entries = run(new ClaudeStreamJsonNormalizer(fixedClock), 'claude-headless-tool-allowedTools.jsonl');
    expect(shape(entries)).toEqual([
      ['system_message', null, null],
      ['command_run', 'running', 'Bash'],
      ['tool_result', 'success', 'Bash'],
      ['assistant_message', null, null],
    ]);
    expect(entries[1]).toMatchObject({ content: 'echo hello-from-tool > tool_out.txt && cat tool_out.txt', metadata: { toolCallId: 'toolu_fake_3', toolInput: { command: 'echo hello-from-tool > tool_out.txt && cat tool_out.txt' } } });
    expect(entries[2]).toMatchObject({ content: 'hello-from-tool', metadata: { toolCallId: 'toolu_fake_3', toolOutput: 'hello-from-tool' } });
    expectPaired(entries);
  });

  it('a refused command: its result failed', () => {
    const entries = run(new ClaudeStreamJsonNormalizer(fixedClock), 'claude-headless-tool-default-perm.jsonl');
    expect(shape(entries)).toEqual([
      ['system_message', null, null],
      ['command_run', 'running', 'Bash'],
      ['tool_result', 'failed', 'Bash'],
      ['assistant_message', null, null],
    ]);
    expect(entries[2]?.content).toMatch(/Output redirection .* was blocked/);
    expect(entries[2]?.timestamp).toBe(Date.parse('2026-11-22T01:57:32.940Z'));
  });

  it('file edits and reads, by the tool, with the file', () => {
    const n = new ClaudeStreamJsonNormalizer(fixedClock);
    const line = (blocks: unknown[]): string => JSON.stringify({ type: 'assistant', message: { content: blocks } });
    const entries = n.line(line([{ type: 'tool_use', id: 't1', name: 'Edit', input: { file_path: '/w/a.ts', old_string: 'a', new_string: 'b' } }, { type: 'tool_use', id: 't2', name: 'Read', input: { file_path: '/w/b.ts' } }, { type: 'tool_use', id: 't3', name: 'WebFetch', input: { url: 'x' } }]));
    expect(entries.map((e) => [e.type, e.content, e.metadata?.filePath ?? null])).toEqual([
      ['file_edit', '/w/a.ts', '/w/a.ts'],
      ['file_read', '/w/b.ts', '/w/b.ts'],
      ['tool_use', 'WebFetch', null],
    ]);
  });

  it('an error result is an error entry', () => {
    const n = new ClaudeStreamJsonNormalizer(fixedClock);
    expect(n.line(JSON.stringify({ type: 'result', subtype: 'success', is_error: true, result: 'API Error: 500 scripted failure' }))).toMatchObject([{ type: 'error', content: 'API Error: 500 scripted failure' }]);
    expect(n.line(JSON.stringify({ type: 'result', subtype: 'error_max_turns', is_error: false }))).toMatchObject([{ type: 'error', content: 'the run ended with error_max_turns' }]);
  });
});

describe("Codex's exec --json, recorded from the real CLI", () => {
  it('a text reply (with the warning Codex sends as an error item)', () => {
    const entries = run(new CodexExecJsonNormalizer(fixedClock), 'codex-headless-text.jsonl');
    expect(shape(entries)).toEqual([
      ['system_message', null, null],
      ['error', 'failed', null],
      ['assistant_message', null, null],
    ]);
    expect(entries[2]?.content).toBe('Hello from fake model');
  });

  it('a command, its result with the exit code, paired by item id, then the final reply', () => {
    const entries = run(new CodexExecJsonNormalizer(fixedClock), 'codex-headless-tool.jsonl');
    expect(shape(entries)).toEqual([
      ['system_message', null, null],
      ['command_run', 'running', 'shell'],
      ['tool_result', 'success', 'shell'],
      ['assistant_message', null, null],
    ]);
    expect(entries[2]).toMatchObject({ content: 'hello-from-tool\n', metadata: { exitCode: 0, toolCallId: 'item_0' } });
    expectPaired(entries);
  });

  it('a failed command, a file change and a failed turn', () => {
    const n = new CodexExecJsonNormalizer(fixedClock);
    const entries = [
      { type: 'item.completed', item: { id: 'i1', type: 'command_execution', command: 'false', aggregated_output: '', exit_code: 1, status: 'failed' } },
      { type: 'item.completed', item: { id: 'i2', type: 'file_change', changes: [{ path: '/w/a.ts', kind: 'update' }, { path: '/w/b.ts', kind: 'add' }], status: 'completed' } },
      { type: 'turn.failed', error: { message: 'stream error: 500' } },
    ].flatMap((l) => n.line(JSON.stringify(l)));
    expect(entries.map((e) => [e.type, e.content, e.metadata?.status ?? null])).toEqual([
      ['command_run', 'false', 'running'],
      ['tool_result', '', 'failed'],
      ['file_edit', 'update /w/a.ts', 'success'],
      ['file_edit', 'add /w/b.ts', 'success'],
      ['error', 'stream error: 500', 'failed'],
    ]);
    expectPaired(entries);
  });
});

describe("Gemini CLI's stream-json, recorded from the real CLI", () => {
  it('a streamed reply becomes one message', () => {
    const entries = run(new GeminiStreamJsonNormalizer(fixedClock), 'gemini-headless-text.jsonl');
    expect(shape(entries)).toEqual([
      ['system_message', null, null],
      ['user_message', null, null],
      ['assistant_message', null, null],
    ]);
    expect(entries[2]).toMatchObject({ content: 'Hello from fake model', timestamp: Date.parse('2026-11-22T02:02:45.479Z') });
  });

  it('a shell command and its result, paired by tool id, then the reply', () => {
    const entries = run(new GeminiStreamJsonNormalizer(fixedClock), 'gemini-headless-tool-yolo.jsonl');
    expect(shape(entries)).toEqual([
      ['system_message', null, null],
      ['user_message', null, null],
      ['command_run', 'running', 'run_shell_command'],
      ['tool_result', 'success', 'run_shell_command'],
      ['assistant_message', null, null],
    ]);
    expect(entries[3]?.content).toBe('hello-from-tool');
    expect(entries[4]?.content).toBe('Done: the command ran. Final answer from fake model.');
    expectPaired(entries);
  });

  it('a reply still streaming when the stream ends is given out by end()', () => {
    const n = new GeminiStreamJsonNormalizer(fixedClock);
    expect(n.line(JSON.stringify({ type: 'message', role: 'assistant', content: 'half ', delta: true }))).toEqual([]);
    expect(n.line(JSON.stringify({ type: 'message', role: 'assistant', content: 'done', delta: true }))).toEqual([]);
    expect(n.end().map((e) => e.content)).toEqual(['half done']);
    expect(n.end()).toEqual([]);
  });
});

describe("OpenCode's run --format json, recorded from the real CLI", () => {
  it('a text reply', () => {
    const entries = run(new OpenCodeJsonNormalizer(fixedClock), 'opencode-headless-text.jsonl');
    expect(entries.map((e) => [e.type, e.content])).toEqual([['assistant_message', 'Hello from fake model']]);
    expect(entries[0]?.timestamp).toBe(1795313048180);
  });

  it('a command with its result in one line: call and result, paired, with the exit code', () => {
    const entries = run(new OpenCodeJsonNormalizer(fixedClock), 'opencode-headless-tool.jsonl');
    expect(shape(entries)).toEqual([
      ['command_run', 'running', 'bash'],
      ['tool_result', 'success', 'bash'],
      ['assistant_message', null, null],
    ]);
    expect(entries[1]).toMatchObject({ content: 'hello-from-tool\n', metadata: { exitCode: 0, toolCallId: 'call_fake_2' } });
    expectPaired(entries);
  });

  it('a command the user rejected: its result failed, with the reason', () => {
    const entries = run(new OpenCodeJsonNormalizer(fixedClock), 'opencode-headless-tool-ask.jsonl');
    expect(shape(entries).slice(0, 2)).toEqual([
      ['command_run', 'running', 'bash'],
      ['tool_result', 'failed', 'bash'],
    ]);
    expect(entries[1]?.content).toBe('The user rejected permission to use this specific tool call.');
  });
});

describe('lines that cannot be read', () => {
  it.each([new ClaudeStreamJsonNormalizer(fixedClock), new CodexExecJsonNormalizer(fixedClock), new GeminiStreamJsonNormalizer(fixedClock), new OpenCodeJsonNormalizer(fixedClock)])('become raw entries and are counted, never dropped ($format)', (n) => {
    const entries = ['not json', '{"half": ', '[1,2]', '{"no_type": true}', ''].flatMap((l) => n.line(l));
    expect(entries.map((e) => [e.type, e.content])).toEqual([
      ['raw', 'not json'],
      ['raw', '{"half": '],
      ['raw', '[1,2]'],
      ['raw', '{"no_type": true}'],
    ]);
    expect(n.unparsed).toBe(4);
    expect(new Set(entries.map((e) => e.id)).size).toBe(4);
  });
});
