/**
 * The MCP server core through the SDK's own client over the SDK's in-memory transport, with a
 * backend in memory: every tool listed and called, errors for bad arguments and for what the
 * backend refuses.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../core/errors.js';
import type { McpAskResult, McpBackend } from './backend.js';
import { createMcpServer, MCP_TOOLS } from './server.js';

/** Two panes; asks answered at once for `codex`, never for `slow`. */
class MemoryBackend implements McpBackend {
  readonly sent: { pane_id: string; text: string; enter: boolean }[] = [];
  private readonly asks = new Map<string, McpAskResult>();
  private next = 0;

  listAgents() {
    return Promise.resolve([
      { pane_id: 'p1', agent: 'codex', state: 'idle', folder: '/work', title: 'codex', askable: true },
      { pane_id: 'p2', agent: 'claude', state: 'thinking', folder: '/work', title: 'slow', askable: false },
    ]);
  }
  ask(p: { target: string; question: string; wait: boolean }): Promise<McpAskResult> {
    if (p.target === 'nobody') return Promise.reject(new SwitchboardError('PANE_NOT_FOUND', 'no pane is called nobody'));
    const id = (this.next++).toString(16).padStart(10, '0');
    const answered = p.target === 'codex' && p.wait;
    const ask: McpAskResult = { ask_id: id, status: answered ? 'done' : 'queued', target: { pane_id: p.target === 'codex' ? 'p1' : 'p2', agent: p.target, title: p.target }, reply: answered ? `answer to ${p.question}` : null, error: null };
    this.asks.set(id, ask);
    return Promise.resolve(ask);
  }
  askResult(p: { ask_id: string }): Promise<McpAskResult> {
    const ask = this.asks.get(p.ask_id);
    return ask ? Promise.resolve(ask) : Promise.reject(new SwitchboardError('ASK_NOT_FOUND', `no ask ${p.ask_id}`));
  }
  send(p: { pane_id: string; text: string; enter: boolean }) {
    if (p.pane_id === 'p2') return Promise.reject(new SwitchboardError('FORBIDDEN', 'forbidden: this token may not call send_text'));
    this.sent.push(p);
    return Promise.resolve({ sent: true as const });
  }
  read(p: { pane_id: string; lines: number }) {
    return Promise.resolve({ pane_id: p.pane_id, text: ['one', 'two', 'three'].slice(-p.lines).join('\n') });
  }
  wait(p: { pane_id: string; until: 'idle' | 'pattern'; pattern?: string }) {
    return Promise.resolve(p.until === 'idle' ? { matched: true, state: 'idle' } : { matched: true, state: 'idle', match: p.pattern ?? '' });
  }
}

const clients: Client[] = [];
async function connected(backend: McpBackend): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(backend).connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> => (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('the MCP server', () => {
  it('lists its tools with their input schemas', async () => {
    const client = await connected(new MemoryBackend());
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...MCP_TOOLS].sort());
    const ask = tools.find((t) => t.name === 'ask');
    expect(ask?.inputSchema.required).toEqual(expect.arrayContaining(['target', 'question']));
    expect(Object.keys(ask?.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['target', 'question', 'wait', 'timeout_ms']));
    expect(tools.find((t) => t.name === 'read')?.annotations?.readOnlyHint).toBe(true);
  });

  it('calls each tool', async () => {
    const backend = new MemoryBackend();
    const client = await connected(backend);
    const listed = await call(client, 'list_agents', {});
    expect(text(listed)).toContain('p1  codex  idle  codex  /work');
    expect(text(listed)).toContain('(not askable)');
    expect(listed.structuredContent).toMatchObject({ agents: [{ pane_id: 'p1' }, { pane_id: 'p2', askable: false }] });

    const asked = await call(client, 'ask', { target: 'codex', question: 'what is 2+2?' });
    expect(asked.isError).toBeFalsy();
    expect(text(asked)).toBe('answer to what is 2+2?');
    expect(asked.structuredContent).toMatchObject({ status: 'done', target: { pane_id: 'p1' } });

    const queued = await call(client, 'ask', { target: 'slow', question: 'later?', wait: false });
    const id = (queued.structuredContent as { ask_id: string }).ask_id;
    expect(text(queued)).toContain(`call ask_result with this ask_id`);
    expect((await call(client, 'ask_result', { ask_id: id })).structuredContent).toMatchObject({ ask_id: id, status: 'queued' });

    expect(text(await call(client, 'send', { pane_id: 'p1', text: 'ls' }))).toBe('sent to p1');
    expect(backend.sent).toEqual([{ pane_id: 'p1', text: 'ls', enter: true }]);
    expect(text(await call(client, 'read', { pane_id: 'p1', lines: 2 }))).toBe('two\nthree');
    expect(text(await call(client, 'wait', { pane_id: 'p1' }))).toBe('p1 is idle');
    expect(text(await call(client, 'wait', { pane_id: 'p1', until: 'pattern', pattern: 'three' }))).toBe('p1 shows three');
  });

  it('answers bad arguments and refusals with tool errors that name the problem', async () => {
    const client = await connected(new MemoryBackend());
    const missing = await call(client, 'ask', { target: 'codex' });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/question/);
    const badType = await call(client, 'read', { pane_id: 'p1', lines: 'many' });
    expect(badType.isError).toBe(true);
    expect(text(badType)).toMatch(/lines/);
    const badId = await call(client, 'ask_result', { ask_id: 'not-an-id' });
    expect(badId.isError).toBe(true);
    expect(text(badId)).toMatch(/ten hex digits/);
    expect(text(await call(client, 'wait', { pane_id: 'p1', until: 'pattern' }))).toBe('INVALID_PARAMS: until=pattern needs a pattern');
    const unknown = await call(client, 'ask', { target: 'nobody', question: 'hi' });
    expect(unknown).toMatchObject({ isError: true, structuredContent: { error: { code: 'PANE_NOT_FOUND' } } });
    expect(text(await call(client, 'send', { pane_id: 'p2', text: 'x' }))).toMatch(/^FORBIDDEN: /);
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).resolves.toMatchObject({ isError: true });
  });
});
