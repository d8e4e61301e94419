import { describe, expect, it } from 'vitest';
import { CodexAppServerNormalizer } from './normalize-codex-app-server.js';

// Shapes as Codex 0.171.0's app server sent them against the scripted model.
const command = (status: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ type: 'commandExecution', id: 'call_1', command: "/bin/bash -lc 'rm victim.txt'", cwd: '/w', status, commandActions: [], aggregatedOutput: null, exitCode: null, ...extra });

describe('CodexAppServerNormalizer', () => {
  it('makes a command a command_run when it starts and a tool_result when it ends, declined ones failed', () => {
    const n = new CodexAppServerNormalizer(() => 1);
    expect(n.notification('item/started', { item: command('inProgress') })).toMatchObject([{ type: 'command_run', content: "/bin/bash -lc 'rm victim.txt'", metadata: { toolCallId: 'call_1', status: 'running' } }]);
    expect(n.notification('item/completed', { item: command('declined') })).toMatchObject([{ type: 'tool_result', metadata: { toolCallId: 'call_1', status: 'failed' } }]);
    n.notification('item/started', { item: command('inProgress', { id: 'call_2' }) });
    expect(n.notification('item/completed', { item: command('completed', { id: 'call_2', aggregatedOutput: 'ok\n', exitCode: 0 }) })).toMatchObject([{ type: 'tool_result', content: 'ok\n', metadata: { exitCode: 0, status: 'success' } }]);
  });

  it('keeps a patch’s changes for its approval and makes file_edit entries when it ends', () => {
    const n = new CodexAppServerNormalizer(() => 1);
    const item = { type: 'fileChange', id: 'call_p', changes: [{ path: '/w/new.txt', kind: { type: 'add' }, diff: 'hello\n' }], status: 'inProgress' };
    expect(n.notification('item/started', { item })).toEqual([]);
    expect(n.changesOf('call_p')).toEqual([{ path: '/w/new.txt', kind: 'add' }]);
    expect(n.notification('item/completed', { item: { ...item, status: 'completed' } })).toMatchObject([{ type: 'file_edit', content: 'add /w/new.txt', metadata: { filePath: '/w/new.txt', status: 'success' } }]);
    expect(n.changesOf('call_p')).toEqual([]);
  });

  it('streams the reply as pieces and records the whole message once written', () => {
    const n = new CodexAppServerNormalizer(() => 1);
    expect(n.notification('item/agentMessage/delta', { delta: 'One two ' })).toEqual([]);
    n.notification('item/agentMessage/delta', { delta: 'three.' });
    expect(n.takePieces()).toEqual(['One two ', 'three.']);
    expect(n.takePieces()).toEqual([]);
    expect(n.notification('item/completed', { item: { type: 'agentMessage', id: 'm', text: 'One two three.' } })).toMatchObject([{ type: 'assistant_message', content: 'One two three.' }]);
  });

  it('reports errors (a retry as a note) and closes commands an interrupt left open', () => {
    const n = new CodexAppServerNormalizer(() => 1);
    expect(n.notification('error', { error: { message: 'boom', codexErrorInfo: 'internalServerError' }, willRetry: false })).toMatchObject([{ type: 'error', content: 'boom (internalServerError)' }]);
    expect(n.notification('error', { error: { message: 'slow' }, willRetry: true })).toMatchObject([{ type: 'system_message' }]);
    n.notification('item/started', { item: command('inProgress') });
    expect(n.closeOpenItems('ended')).toMatchObject([{ type: 'tool_result', metadata: { toolCallId: 'call_1', status: 'failed' } }]);
    expect(n.closeOpenItems('ended')).toEqual([]);
    expect(n.notification('thread/tokenUsage/updated', {})).toEqual([]);
    expect(n.notification('item/completed', { item: { id: 'x' } })).toEqual([]);
  });
});
