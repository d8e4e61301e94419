import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SwitchboardError } from '../core/errors.js';
import { CodexExecJsonNormalizer } from './normalize-codex.js';
import { ClaudeStreamJsonNormalizer } from './normalize-claude.js';
import { negotiateSchema, StreamEventEncoder, type StreamEventV2 } from './stream-events.js';

const captures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'fixtures', 'cli-captures');
const lines = (file: string): string[] => readFileSync(path.join(captures, file), 'utf8').split('\n');

describe('schema_version negotiation', () => {
  it('picks the highest version both sides speak', () => {
    expect(negotiateSchema(undefined)).toBe('v2');
    expect(negotiateSchema([])).toBe('v2');
    expect(negotiateSchema(['v1'])).toBe('v1');
    expect(negotiateSchema(['v1', 'v2'])).toBe('v2');
    expect(negotiateSchema(['v2', 'v1'], ['v1'])).toBe('v1');
  });

  it('refuses with INVALID_PARAMS when there is nothing in common', () => {
    const err = (() => {
      try {
        negotiateSchema(['v3']);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(SwitchboardError);
    expect((err as SwitchboardError).code).toBe('INVALID_PARAMS');
    expect((err as SwitchboardError).message).toBe('no common schema_version: asked for v3, this backend speaks v1, v2');
  });
});

describe('events from entries', () => {
  it("a real Codex run: tool_call, tool_result and token, paired, then done (v2, with compat)", () => {
    const normalizer = new CodexExecJsonNormalizer(() => 5);
    const encoder = new StreamEventEncoder('run-1', 'v2');
    const events = [...lines('codex-headless-tool.jsonl').flatMap((l) => normalizer.line(l)).flatMap((e) => encoder.fromEntry(e)), encoder.done('completed', 9)] as StreamEventV2[];
    expect(events.map((e) => e.type)).toEqual(['tool_call', 'tool_result', 'token', 'done']);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(events[0]?.data).toMatchObject({ id: 'item_0', name: 'shell', kind: 'command_run' });
    expect(events[1]?.data).toMatchObject({ id: 'item_0', exit_code: 0, is_error: false, output: 'hello-from-tool\n' });
    expect(events[1]?.compat).toEqual({ text: 'hello-from-tool\n', status: 'success', is_error: false });
    expect(events[2]?.compat.text).toBe('Done: the command ran. Final answer from fake model.');
    expect(events[3]).toMatchObject({ schema_version: 'v2', run_id: 'run-1', ts: 9, data: { outcome: 'completed' }, compat: { status: 'completed', is_error: false } });
  });

  it('v1 is the flat form: the compat fields at the top level, no data', () => {
    const normalizer = new ClaudeStreamJsonNormalizer(() => 5);
    const encoder = new StreamEventEncoder('run-2', 'v1');
    const events = lines('claude-headless-tool-default-perm.jsonl').flatMap((l) => normalizer.line(l)).flatMap((e) => encoder.fromEntry(e));
    expect(events.map((e) => [e.schema_version, e.type, 'data' in e])).toEqual([
      ['v1', 'tool_call', false],
      ['v1', 'tool_result', false],
      ['v1', 'token', false],
    ]);
    expect(events[1]).toMatchObject({ status: 'failed', is_error: true });
    expect(encoder.done('failed', 1, 'API Error')).toMatchObject({ type: 'done', status: 'failed', is_error: true, text: 'API Error' });
  });

  it('a finished file change is a patch; an error is an error; the user prompt and system notes are not events', () => {
    const normalizer = new CodexExecJsonNormalizer(() => 5);
    const encoder = new StreamEventEncoder('run-3', 'v2');
    const entries = [
      { type: 'thread.started', thread_id: 't' },
      { type: 'item.completed', item: { id: 'i2', type: 'file_change', changes: [{ path: '/w/a.ts', kind: 'update' }], status: 'completed' } },
      { type: 'turn.failed', error: { message: 'stream error: 500' } },
    ].flatMap((l) => normalizer.line(JSON.stringify(l)));
    const events = entries.flatMap((e) => encoder.fromEntry(e)) as StreamEventV2[];
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['patch', { id: 'i2', path: '/w/a.ts', summary: 'update /w/a.ts', applied: true }],
      ['error', { message: 'stream error: 500' }],
    ]);
    expect(events[1]?.compat).toEqual({ text: 'stream error: 500', status: 'failed', is_error: true });
  });
});
