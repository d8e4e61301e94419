/**
 * Asks over HTTP (`/api/v2/asks`) against a real daemon on its HTTP port, a real Codex CLI in a
 * pane and the scripted model: ask and wait gets the reply; an async ask answers 202 with its id at
 * once, and wait and get then give the reply; list and targets; a timed-out ask is 200 with status
 * timed_out and TIMEOUT, as JSON-RPC reports it; cancel; a pane's own token asks as its pane and no
 * other, and one without the scope is refused; and the errors: no token 401, a bad body 400 with
 * INVALID_PARAMS or PARSE_ERROR, an unknown ask 404 with ASK_NOT_FOUND, an exited target 409, in
 * the API's one error shape.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../../src/client/index.js';
import type { AskInfo } from '../../../src/protocol/methods.js';
import { useScriptedModel } from '../scripted-model.js';
import { useTestDaemon } from '../../support/daemon.js';
import { apiClient, type ApiClient } from '../../support/sse.js';
import { until } from '../../support/processes.js';

const sm = useScriptedModel({
  name: 'ask-http',
  title: 'Asks over HTTP',
  rules: [
    { match: 'capital of France', steps: [{ text: 'Paris is the capital of France.', delay_ms: 500 }] },
    { match: 'largest planet', steps: [{ text: 'Jupiter is the largest planet.' }] },
    { match: 'smallest planet', steps: [{ text: 'Mercury is the smallest planet.' }] },
    // Held until the file ends: Codex stays busy with it, so the asks after it stay queued.
    { match: 'think for long', steps: [{ text: 'That took a while.', wait_for: 'never' }] },
  ],
});
const ctx = useTestDaemon({ dashboard: { port: 0 } });

let client: SwitchboardClient;
let api: ApiClient;
let base: string;
let codexPane: string;
let shellPane: string;
let work: string;

beforeAll(async () => {
  client = await connect({ home: ctx.home });
  work = path.join(ctx.work, 'project');
  mkdirSync(work, { recursive: true });
  const codex = await client.createPane({ agent: 'codex', cwd: work, agent_home: sm.tempDir('sb-ask-http-codex-home-').dir, model_url: sm.model.url, cols: 120, rows: 40, ready_timeout_ms: 120_000 });
  codexPane = codex.pane_id;
  shellPane = (await client.createPane({ argv: ['cat'], cwd: work, title: 'asker' })).pane_id;
  base = `http://127.0.0.1:${ctx.daemon.dashboard?.port ?? 0}`;
  api = apiClient(base, ctx.daemon.token);
}, 180_000);

afterAll(() => {
  client.close();
});

/** A call whose answer must be an ask with this status code. */
async function askCall(method: string, where: string, body: unknown, status: number, token?: string): Promise<AskInfo> {
  const res = await (token === undefined ? api : apiClient(base, token)).call(method, where, body);
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  return res.body as AskInfo;
}

describe('asks over HTTP', { timeout: 300_000 }, () => {
  it('refuses a caller without a token (401) and a bad request in the one error shape', async () => {
    const anonymous = await fetch(`${base}/api/v2/asks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ target: 'codex', question: 'hi' }) });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    expect(await anonymous.json()).toMatchObject({ error: { code: 'INVALID_TOKEN', rpc_code: -32001 } });
    expect(await api.call('GET', '/api/v2/asks', undefined, { Authorization: 'Bearer not-the-token' })).toMatchObject({ status: 401, body: { error: { code: 'INVALID_TOKEN' } } });

    const noQuestion = await api.call('POST', '/api/v2/asks', { target: 'codex' });
    expect(noQuestion).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS', rpc_code: -32602, type: 'invalid_params' } } });
    expect(JSON.stringify(noQuestion.body)).toContain('question');
    expect(await api.call('POST', '/api/v2/asks', { target: 'codex', question: 'hi', colour: 'blue' })).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS', details: { problems: ["unknown field 'colour'"] } } } });
    expect(await api.call('POST', '/api/v2/asks', { target: 'codex', question: 'hi', timeout_ms: 0 })).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS' } } });
    expect(await api.call('POST', '/api/v2/asks', { target: 'codex', question: 'hi', wait: 'yes' })).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS' } } });
    expect(await api.call('POST', '/api/v2/asks', '{"target": ')).toMatchObject({ status: 400, body: { error: { code: 'PARSE_ERROR' } } });
    expect(await api.call('POST', '/api/v2/asks', { target: 'nobody-here', question: 'hi' })).toMatchObject({ status: 404, body: { error: { code: 'PANE_NOT_FOUND' } } });
    expect(await api.call('GET', '/api/v2/asks?limit=0')).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS' } } });
    expect(await api.call('GET', '/api/v2/asks?status=done')).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS' } } });

    // An id that cannot be one is a bad parameter; one that could be, but names no ask, is 404.
    expect(await api.call('GET', '/api/v2/asks/not-an-id')).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS' } } });
    for (const [method, where] of [['GET', '/api/v2/asks/0123456789'], ['POST', '/api/v2/asks/0123456789/wait'], ['POST', '/api/v2/asks/0123456789/cancel']] as const) {
      expect(await api.call(method, where), `${method} ${where}`).toMatchObject({ status: 404, body: { error: { code: 'ASK_NOT_FOUND', rpc_code: -32016, details: { ask_id: '0123456789' } } } });
    }
    expect(await api.call('DELETE', '/api/v2/asks/0123456789')).toMatchObject({ status: 405, body: { error: { code: 'INVALID_REQUEST' } } });
  });

  it('lists the agent panes an ask can name', async () => {
    const res = await api.call('GET', '/api/v2/asks/targets');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ targets: [expect.objectContaining({ pane_id: codexPane, agent: 'codex', folder: work, askable: true, alive: true })] });
  });

  it('asks and waits: 200 with the finished ask and its reply', async () => {
    const ask = await askCall('POST', '/api/v2/asks', { target: codexPane, question: 'What is the capital of France?' }, 200);
    expect(ask).toMatchObject({ status: 'done', reply: 'Paris is the capital of France.', reply_source: 'transcript', target: { pane_id: codexPane, agent: 'codex' }, error: null });
    expect(ask.ask_id).toMatch(/^[0-9a-f]{10}$/);
    // The owner's token asks as nobody's pane unless it says otherwise.
    expect(ask.from).toMatchObject({ pane_id: null });
    // The same ask over JSON-RPC: one engine behind both surfaces.
    expect(await client.askGet(ask.ask_id)).toEqual(ask);
  });

  it('asks without waiting: 202 with its id at once; wait and get then give the reply', async () => {
    const queued = await askCall('POST', '/api/v2/asks', { target: 'codex', question: 'What is the largest planet?', wait: false, cwd: work, from_name: 'http-test' }, 202);
    expect(queued.ask_id).toMatch(/^[0-9a-f]{10}$/);
    expect(['queued', 'typing', 'waiting']).toContain(queued.status);
    expect(queued.from).toMatchObject({ pane_id: null, cwd: work, name: 'http-test' });
    const waited = await askCall('POST', `/api/v2/asks/${queued.ask_id}/wait`, undefined, 200);
    expect(waited).toMatchObject({ ask_id: queued.ask_id, status: 'done', reply: 'Jupiter is the largest planet.' });
    expect(await askCall('GET', `/api/v2/asks/${queued.ask_id}`, undefined, 200)).toEqual(waited);
    // An ended ask's wait answers at once; its cancel changes nothing.
    expect(await askCall('POST', `/api/v2/asks/${queued.ask_id}/wait`, { timeout_ms: 0 }, 200)).toEqual(waited);
    expect(await askCall('POST', `/api/v2/asks/${queued.ask_id}/cancel`, {}, 200)).toEqual(waited);
  });

  it('lists asks oldest first, with the limit ask_list takes', async () => {
    const all = await api.call('GET', '/api/v2/asks');
    expect(all.status).toBe(200);
    const asks = (all.body as { asks: AskInfo[] }).asks;
    expect(asks.map((a) => a.question)).toEqual(['What is the capital of France?', 'What is the largest planet?']);
    const last = await api.call('GET', '/api/v2/asks?limit=1');
    expect((last.body as { asks: AskInfo[] }).asks.map((a) => a.ask_id)).toEqual([asks[1]?.ask_id]);
  });

  it("takes a pane's own token: it asks as its pane and no other; a token without the scope is refused", async () => {
    const paneToken = ctx.daemon.tokens.issue(shellPane, ['read', 'ask']);
    const asked = await askCall('POST', '/api/v2/asks', { target: codexPane, question: 'What is the smallest planet?' }, 200, paneToken);
    expect(asked).toMatchObject({ status: 'done', reply: 'Mercury is the smallest planet.', from: { pane_id: shellPane, cwd: work } });
    const spoofed = await apiClient(base, paneToken).call('POST', '/api/v2/asks', { target: codexPane, question: 'hi', from_pane_id: codexPane });
    expect(spoofed).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
    expect(JSON.stringify(spoofed.body)).toContain(`may ask only as pane ${shellPane}`);
    // Its scopes hold on every route: reading asks yes, starting runs no.
    expect((await apiClient(base, paneToken).call('GET', `/api/v2/asks/${asked.ask_id}`)).status).toBe(200);
    expect(await apiClient(base, paneToken).call('POST', '/api/v2/agent/run', { backend: 'codex', prompt: 'hi' })).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN', details: { scope: 'create' } } } });

    const readOnly = ctx.daemon.tokens.issue(shellPane, ['read']);
    expect((await apiClient(base, readOnly).call('GET', '/api/v2/asks')).status).toBe(200);
    const refused = await apiClient(base, readOnly).call('POST', '/api/v2/asks', { target: codexPane, question: 'hi' });
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN', details: { method: 'ask', scope: 'ask' } } } });
  });

  it('reports a timed-out ask as JSON-RPC does: 200, status timed_out, error TIMEOUT', async () => {
    // Codex busy with a turn that does not end: the ask waits its turn until it times out, however
    // long typing into Codex takes on a loaded machine.
    const before = sm.model.modelRequests().length;
    await client.sendPrompt(codexPane, 'Please think for long.');
    await until(() => sm.model.modelRequests().slice(before).some((r) => r.plan?.prompt.includes('think for long') === true), 'Codex to ask the model');
    const slow = await askCall('POST', '/api/v2/asks', { target: codexPane, question: 'What is the hottest planet?', timeout_ms: 2_000 }, 200);
    expect(slow).toMatchObject({ status: 'timed_out', reply: null, error: { code: 'TIMEOUT' } });
  });

  it('cancels an ask still queued; a wait that ends first answers 202 with the ask as it stands', async () => {
    // Codex still works on its turn: this one waits its turn.
    const queued = await askCall('POST', '/api/v2/asks', { target: codexPane, question: 'What is the largest planet?', wait: false }, 202);
    expect(queued.status).toBe('queued');
    expect(await askCall('POST', `/api/v2/asks/${queued.ask_id}/wait`, { timeout_ms: 0 }, 202)).toMatchObject({ ask_id: queued.ask_id, status: 'queued' });
    const cancelled = await askCall('POST', `/api/v2/asks/${queued.ask_id}/cancel`, undefined, 200);
    expect(cancelled).toMatchObject({ ask_id: queued.ask_id, status: 'cancelled', reply: null });
    expect(await askCall('GET', `/api/v2/asks/${queued.ask_id}`, undefined, 200)).toMatchObject({ status: 'cancelled' });
    expect(await askCall('POST', `/api/v2/asks/${queued.ask_id}/wait`, undefined, 200)).toMatchObject({ status: 'cancelled' });
    expect(await api.call('POST', `/api/v2/asks/${queued.ask_id}/cancel`, { now: true })).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS' } } });
  });

  it('refuses an ask to a pane that has exited at once: 409 PANE_EXITED', async () => {
    await client.kill(codexPane, { graceMs: 1_000 });
    expect(await api.call('POST', '/api/v2/asks', { target: codexPane, question: 'Anyone there?' })).toMatchObject({ status: 409, body: { error: { code: 'PANE_EXITED', details: { pane_id: codexPane } } } });
  });
});
