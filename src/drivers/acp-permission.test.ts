import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { asRecord } from '../output/entry.js';
import { describeSubject, outcomeFor, permissionRequestFor, type AcpPermissionOption } from './acp-permission.js';

/** The permission requests test/e2e/acp-driver.test.ts recorded from each CLI. */
const recorded = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'fixtures', 'acp');
const SHELL_COMMAND = 'echo hello-from-tool > tool_out.txt && cat tool_out.txt';

function permissionRequests(cli: string, name: string): { toolCall: unknown; options: AcpPermissionOption[] }[] {
  return readFileSync(path.join(recorded, cli, `${name}.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => asRecord(JSON.parse(line)))
    .filter((message) => message?.method === 'session/request_permission')
    .map((message) => asRecord(message?.params) as { toolCall: unknown; options: AcpPermissionOption[] });
}

describe.each(['gemini-0.61.0', 'opencode-1.18.33'])('permission requests recorded from %s', (cli) => {
  const [shell, write] = permissionRequests(cli, 'callback-shell-and-write');

  it('a shell call is judged as its command', () => {
    const request = permissionRequestFor(shell?.toolCall);
    expect(request).toMatchObject({ toolName: 'execute', subject: { tool: 'shell', command: SHELL_COMMAND } });
    expect(request.toolCallId).toBeTruthy();
    expect(describeSubject(request.subject)).toBe(`shell ${SHELL_COMMAND}`);
  });

  it('a file write is judged as an edit of its file', () => {
    expect(permissionRequestFor(write?.toolCall)).toMatchObject({ toolName: 'edit', subject: { tool: 'file_edit', path: '/home/dev/work/note.txt' } });
  });

  it('allow is the allow-once option, deny the reject-once one', () => {
    const options = shell?.options ?? [];
    const id = (kind: string): string | undefined => options.find((o) => o.kind === kind)?.optionId;
    expect(outcomeFor(options, 'allow')).toEqual({ outcome: 'selected', optionId: id('allow_once') });
    expect(outcomeFor(options, 'deny')).toEqual({ outcome: 'selected', optionId: id('reject_once') });
  });
});

describe('permission requests the recordings do not have', () => {
  it('judges reads, fetches and other kinds by what ACP says of them', () => {
    expect(permissionRequestFor({ toolCallId: 't', kind: 'read', title: 'Read a', locations: [{ path: '/w/a' }] }).subject).toEqual({ tool: 'file_read', toolName: 'read', path: '/w/a' });
    expect(permissionRequestFor({ toolCallId: 't', kind: 'fetch', title: 'Fetch', rawInput: { url: 'https://example.com' } }).subject).toEqual({ tool: 'network', toolName: 'fetch', url: 'https://example.com' });
    expect(permissionRequestFor({ toolCallId: 't', kind: 'delete', title: 'Delete a' }).subject).toEqual({ tool: 'other', toolName: 'Delete a' });
    // No kind to go by: a title that is a tool name the policy knows.
    expect(permissionRequestFor({ toolCallId: 't', title: 'bash', rawInput: { command: 'ls' } }).subject).toMatchObject({ tool: 'shell', command: 'ls' });
    expect(permissionRequestFor(undefined)).toMatchObject({ toolName: 'tool', subject: { tool: 'other' } });
  });

  it('falls back to the always options, then to "cancelled"', () => {
    expect(outcomeFor([{ optionId: 'a', kind: 'allow_always' }], 'allow')).toEqual({ outcome: 'selected', optionId: 'a' });
    expect(outcomeFor([{ optionId: 'r', kind: 'reject_always' }], 'deny')).toEqual({ outcome: 'selected', optionId: 'r' });
    expect(outcomeFor([{ optionId: 'a', kind: 'allow_once' }], 'deny')).toEqual({ outcome: 'cancelled' });
  });
});
