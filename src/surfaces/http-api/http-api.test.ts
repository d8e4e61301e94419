/**
 * The HTTP API in-process against the run service with the scripted fake backend: the endpoints,
 * SSE with Last-Event-ID, the ledger's replay, cancel, the chat proxy with the official `openai`
 * client, the OpenAPI document, and every kind of bad request answered in the error shape, never
 * a 5xx (fast-check properties over the request schemas).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import OpenAI from 'openai';
import { RunLedger } from '../../ledger/run-ledger.js';
import { SqliteLedgerStore } from '../../ledger/sqlite-store.js';
import { parseGovernancePolicy } from '../../governance/policy-file.js';
import { RunService } from '../../runs/run-service.js';
import { FakeBackend } from '../../runs/backends/fake-backend.js';
import { startHttpApiServer, type HttpApiServer } from './server.js';
import { apiClient, type ApiClient, type SseFrame } from '../../../test/support/sse.js';
import { errorSchema, runViewSchema, runEventSchema, backendsResponseSchema } from './schemas.js';
import { MAX_BODY_BYTES } from './router.js';

const TOKEN = 'test-token-0123456789';
let root: string;
let work: string;
let ledger: RunLedger;
let service: RunService;
let server: HttpApiServer;
let api: ApiClient;
let fake: FakeBackend;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'sb-http-api-'));
  work = path.join(root, 'work');
  mkdirSync(work);
  ledger = new RunLedger({ store: new SqliteLedgerStore(':memory:') });
  const policy = parseGovernancePolicy({ sandbox: { roots: [root] }, approvals: { rules: [{ decision: 'allow', tool: ['shell', 'file_write', 'file_edit'], path: 'inside_workdir' }], default: 'deny' }, limits: { concurrency: 4 } });
  ({ service } = await RunService.start({ ledger, policy, backends: [(fake = new FakeBackend({ stepMs: 2 })), new FakeBackend({ name: 'fake-pty', mode: 'pty' })], defaultCwd: work, scope: root }));
  server = await startHttpApiServer({ runs: service, token: TOKEN });
  api = apiClient(server.url, TOKEN);
});

afterAll(async () => {
  await server.close();
  await service.dispose();
  await ledger.close();
  rmSync(root, { recursive: true, force: true });
});

interface RunJson {
  id: string;
  status: string;
  schema_version: string;
  stream_url: string;
  reason: string | null;
}

async function submit(body: Record<string, unknown>): Promise<RunJson> {
  const res = await api.call('POST', '/api/v2/agent/run', { backend: 'fake', cwd: work, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  runViewSchema.parse(res.body);
  return res.body as RunJson;
}

const parsed = (frames: SseFrame[]): Record<string, unknown>[] => frames.map((f) => JSON.parse(f.data) as Record<string, unknown>);

describe('the agent endpoints', () => {
  it.each(['v1', 'v2'])('streams a run in schema %s: token, tool_call, tool_result, patch, done, with the compat fields', async (version) => {
    const run = await submit({ prompt: 'use a tool please', schema_version: version });
    expect(run.schema_version).toBe(version);
    const { status, frames, headers } = await api.stream(run.stream_url);
    expect(status).toBe(200);
    expect(headers.get('x-switchboard-schema-version')).toBe(version);
    const events = parsed(frames);
    for (const e of events) runEventSchema.parse(e);
    expect(frames.map((f) => f.event)).toEqual(expect.arrayContaining(['token', 'tool_call', 'tool_result', 'patch', 'done']));
    expect(frames.at(-1)?.event).toBe('done');
    expect(frames.map((f) => Number(f.id))).toEqual(events.map((_, i) => i + 1));
    expect(events.every((e) => e.schema_version === version)).toBe(true);
    const done = events.at(-1) ?? {};
    if (version === 'v1') expect(done).toMatchObject({ status: 'completed', is_error: false, text: 'end_turn' });
    else expect(done).toMatchObject({ data: { outcome: 'completed', reason: 'finished' }, compat: { status: 'completed', is_error: false } });
  });

  it('replays a run from the ledger exactly as it streamed', async () => {
    const run = await submit({ prompt: 'tokens 120' });
    const live = parsed((await api.stream(run.stream_url)).frames);
    const replay = await api.call('GET', `/api/v2/agent/runs/${run.id}?events=true`);
    expect(replay.status).toBe(200);
    expect((replay.body as { events: unknown[] }).events).toEqual(live);
    // A stream opened after the end replays the same.
    expect(parsed((await api.stream(run.stream_url)).frames)).toEqual(live);
  });

  it('resumes a cut stream with Last-Event-ID: no gap, no duplicate', async () => {
    const run = await submit({ prompt: 'tokens 400' });
    const first = await api.stream(run.stream_url, { stopAfter: 37 });
    const lastId = first.frames.at(-1)?.id;
    expect(lastId).toBe('37');
    const rest = await api.stream(run.stream_url, { lastEventId: lastId ?? '' });
    const ids = [...first.frames, ...rest.frames].map((f) => Number(f.id));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(rest.frames.at(-1)?.event).toBe('done');
    // The query parameter does the same for clients that cannot set headers.
    const viaQuery = await api.stream(`${run.stream_url}&last_event_id=${ids.length - 3}`);
    expect(viaQuery.frames.map((f) => Number(f.id))).toEqual([ids.length - 2, ids.length - 1, ids.length]);
    // At or past the end of a finished run (EventSource reconnecting after done): 204 at once.
    for (const id of [ids.length, ids.length + 10]) {
      const after = await api.stream(run.stream_url, { lastEventId: String(id) });
      expect(after, `Last-Event-ID ${id}`).toMatchObject({ status: 204, frames: [] });
    }
  });

  it('names the run\u2019s error event run_error, so EventSource never takes it for a failed connection', async () => {
    const run = await submit({ prompt: 'fail' });
    const frames = (await api.stream(run.stream_url)).frames;
    const failure = frames.find((f) => (JSON.parse(f.data) as { type: string }).type === 'error');
    expect(failure?.event).toBe('run_error');
    expect(frames.map((f) => f.event)).not.toContain('error');
  });

  it('follows one run with 100 subscribers, each getting every event', async () => {
    const run = await submit({ prompt: 'tokens 200' });
    const all = await Promise.all(Array.from({ length: 100 }, () => api.stream(run.stream_url)));
    const expected = all[0]?.frames.map((f) => f.id);
    expect(expected?.length).toBeGreaterThan(200);
    for (const s of all) expect(s.frames.map((f) => f.id)).toEqual(expected);
  });

  it('cancels a run', async () => {
    const run = await submit({ prompt: 'slow' });
    const cancelled = await api.call('POST', '/api/v2/agent/cancel', { run_id: run.id });
    expect(cancelled).toMatchObject({ status: 200, body: { id: run.id, status: 'cancelled', reason: 'cancelled_by_user' } });
    const frames = (await api.stream(run.stream_url)).frames;
    expect(parsed(frames).at(-1)).toMatchObject({ type: 'done', data: { outcome: 'cancelled' } });
  });

  it("interrupts a run's turn and keeps its conversation, which a follow-up goes on in", async () => {
    const run = await submit({ prompt: 'slow, in a conversation' });
    const interrupted = await api.call('POST', '/api/v2/agent/interrupt', { run_id: run.id });
    expect(interrupted).toMatchObject({ status: 200, body: { id: run.id, status: 'cancelled', reason: 'cancelled_by_user', message: 'the turn was interrupted by the caller' } });
    expect(fake.interrupted).toContain(run.id);
    expect(fake.open.has(run.id)).toBe(true);
    const next = await submit({ prompt: 'hello again', parent: run.id });
    const frames = (await api.stream(next.stream_url)).frames;
    expect(parsed(frames).at(-1)).toMatchObject({ type: 'done', data: { outcome: 'completed' } });
    // Refused the same ways as a cancel: no such run, and a body that is not one.
    expect(await api.call('POST', '/api/v2/agent/interrupt', { run_id: 'run_missing' })).toMatchObject({ status: 404, body: { error: { code: 'RUN_NOT_FOUND' } } });
    expect(await api.call('POST', '/api/v2/agent/interrupt', { run: run.id })).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS' } } });
  });

  it('lists backends, runs, and one run', async () => {
    const backends = await api.call('GET', '/api/v2/agent/backends');
    expect(backends.status).toBe(200);
    backendsResponseSchema.parse(backends.body);
    expect((backends.body as { backends: { name: string }[] }).backends.map((b) => b.name)).toEqual(['fake', 'fake-pty']);
    // No cluster behind this daemon: no node, and it says so.
    expect(await api.call('GET', '/api/v2/agent/nodes')).toMatchObject({ status: 200, body: { cluster: false, nodes: [] } });
    const run = await submit({ prompt: 'hello' });
    await api.stream(run.stream_url);
    const runs = await api.call('GET', '/api/v2/agent/runs?limit=2');
    expect((runs.body as { runs: RunJson[] }).runs[0]).toMatchObject({ id: run.id, status: 'completed' });
    expect((runs.body as { runs: unknown[] }).runs).toHaveLength(2);
    const one = await api.call('GET', `/api/v2/agent/runs/${run.id}`);
    expect(one.body).toMatchObject({ run: { id: run.id, status: 'completed', reason: 'finished' } });
    const missing = await api.call('GET', '/api/v2/agent/runs/run_missing');
    expect(missing).toMatchObject({ status: 404, body: { error: { code: 'RUN_NOT_FOUND', rpc_code: -32015 } } });
    // A path that cannot be a run id names no run either: 404, not a complaint about params.
    expect(await api.call('GET', `/api/v2/agent/runs/${encodeURIComponent('no run!')}`)).toMatchObject({ status: 404, body: { error: { code: 'RUN_NOT_FOUND' } } });
    const noStream = await api.call('GET', '/api/v2/agent/stream?run_id=run_missing');
    expect(noStream).toMatchObject({ status: 404, body: { error: { code: 'RUN_NOT_FOUND' } } });
  });

  it('refuses a folder outside the sandbox with 403, naming the run and the rule', async () => {
    const res = await api.call('POST', '/api/v2/agent/run', { backend: 'fake', prompt: 'hello', cwd: tmpdir() });
    expect(res).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN', details: { rule: 'sandbox.roots' } } } });
    const runId = (res.body as { error: { details: { run_id: string } } }).error.details.run_id;
    expect((await api.call('GET', `/api/v2/agent/runs/${runId}`)).body).toMatchObject({ run: { status: 'failed', reason: 'policy' } });
  });
});

describe('the chat proxy', () => {
  const client = (): OpenAI => new OpenAI({ apiKey: TOKEN, baseURL: `${server.url}/api/v2/chat/proxy`, maxRetries: 0 });

  it('answers the official openai client, whole', async () => {
    const completion = await client().chat.completions.create({ model: 'fake', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'say hello' }] });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.content).toBe('Hello from the fake backend.');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    const runId = (completion as unknown as { switchboard: { run_id: string } }).switchboard.run_id;
    expect((await api.call('GET', `/api/v2/agent/runs/${runId}`)).body).toMatchObject({ run: { backend: 'fake', status: 'completed', prompt: '[system] be brief\n\n[user] say hello' } });
  });

  it('ends the CLI of a chat completion with its run: nobody can follow it up', async () => {
    const completion = await client().chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: 'say hello' }] });
    const runId = (completion as unknown as { switchboard: { run_id: string } }).switchboard.run_id;
    expect((await api.call('GET', `/api/v2/agent/runs/${runId}`)).body).toMatchObject({ run: { status: 'completed', keep_alive: false } });
    expect(fake.threads.has(runId)).toBe(true);
    expect(fake.open.has(runId)).toBe(false);
    // A run of the agent endpoint is kept for a follow-up unless it says keep_alive: false; the backends say how many are kept.
    const kept = await submit({ prompt: 'hello' });
    const once = await submit({ prompt: 'hello', keep_alive: false });
    await api.stream(kept.stream_url);
    await api.stream(once.stream_url);
    expect(fake.open.has(kept.id)).toBe(true);
    expect(fake.open.has(once.id)).toBe(false);
    const backends = await api.call('GET', '/api/v2/agent/backends');
    backendsResponseSchema.parse(backends.body);
    expect(backends.body).toMatchObject({ idle: { max: 4, idle_ms: 600_000, backends: { fake: { conversations: expect.any(Number) as unknown } } } });
    const followUp = await api.call('POST', '/api/v2/agent/run', { backend: 'fake', prompt: 'again', parent: once.id });
    expect(followUp).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS', message: expect.stringContaining('keep_alive: false') as unknown } } });
  });

  it('streams to the official openai client', async () => {
    const stream = await client().chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: 'tokens 30' }], stream: true });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(Array.from({ length: 30 }, (_, i) => `piece ${i} `).join(''));
    expect(finish).toBe('stop');
  });

  it('reports a failed run and a bad request as errors the client understands', async () => {
    await expect(client().chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: 'fail' }] })).rejects.toMatchObject({ status: 502, code: 'AGENT_ERROR' });
    // An unknown model is a 404, as OpenAI answers it (the package's NotFoundError).
    await expect(client().chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 404, code: 'INVALID_PARAMS' });
    const stream = await client().chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: 'crash' }], stream: true });
    await expect(
      (async () => {
        const chunks: unknown[] = [];
        for await (const chunk of stream) chunks.push(chunk);
      })(),
    ).rejects.toThrow(/crashed|SIGKILL/);
    const models = await client().models.list();
    expect(models.data.map((m) => m.id)).toEqual(['fake', 'fake-pty']);
  });
});

describe('the chat proxy, as clients that retry use it', () => {
  /** The official client with its defaults: two retries, a 10-minute timeout. */
  const defaults = (options: { timeout?: number } = {}): OpenAI => new OpenAI({ apiKey: TOKEN, baseURL: `${server.url}/api/v2/chat/proxy`, ...options });
  /** Runs whose prompt is `prompt`, however many were started. */
  const runsOf = async (prompt: string): Promise<{ id: string; status: string; reason: string | null }[]> => (await service.list({ limit: 200 })).runs.filter((r) => r.prompt === prompt);

  it('starts one run per call and gives a failure, the policy\u2019s too, to the client as an error it does not retry', async () => {
    const failing = 'fail, once only';
    await expect(defaults().chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: failing }] })).rejects.toMatchObject({ status: 502, code: 'AGENT_ERROR' });
    expect(await runsOf(failing)).toHaveLength(1);
    const refused = 'write outside /etc/sb-proxy-test.txt';
    const error = (await defaults().chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: refused }] }).catch((err: unknown) => err)) as { status?: number; code?: string; headers?: Headers; message?: string };
    expect(error).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    expect(error.message).toMatch(/policy/);
    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect(await runsOf(refused)).toMatchObject([{ status: 'failed', reason: 'policy' }]);
    // The same when streamed: the failure arrives as an error in the stream.
    const stream = await defaults().chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: `${refused} (streamed)` }], stream: true });
    await expect(
      (async () => {
        for await (const chunk of stream) expect(chunk.object).toBe('chat.completion.chunk');
      })(),
    ).rejects.toThrow(/policy/);
    expect(await runsOf(`${refused} (streamed)`)).toHaveLength(1);
  });

  it('cancels the run of a client that goes away before its answer', async () => {
    for (const stream of [false, true]) {
      const prompt = `slow, then hang up (stream: ${String(stream)})`;
      const abort = new AbortController();
      const call = defaults()
        .chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: prompt }], stream }, { signal: abort.signal })
        .then(async (answer) => {
          if (stream) for await (const chunk of answer as AsyncIterable<{ object: string }>) expect(chunk.object).toBe('chat.completion.chunk');
        });
      await vi.waitFor(async () => expect((await runsOf(prompt))[0]?.status).toMatch(/running|streaming/), { timeout: 20_000, interval: 25 });
      abort.abort();
      // The call rejects, or a stream already open just ends (the package ends its iteration quietly on an abort).
      await call.catch((err: unknown) => expect(err).toBeInstanceOf(OpenAI.APIUserAbortError));
      await vi.waitFor(async () => expect(await runsOf(prompt)).toMatchObject([{ status: 'cancelled' }]), { timeout: 20_000, interval: 25 });
    }
  });

  it('gives a request repeated with its Idempotency-Key the run of the first, and keeps it going for the retry', async () => {
    const prompt = 'say hello, idempotently';
    const key = { headers: { 'Idempotency-Key': `key-${Date.now()}` } };
    const body = { model: 'fake', messages: [{ role: 'user' as const, content: prompt }] };
    const [a, b] = await Promise.all([defaults().chat.completions.create(body, key).withResponse(), defaults().chat.completions.create(body, key).withResponse()]);
    const third = await defaults().chat.completions.create(body, key).withResponse();
    const ids = [a, b, third].map((r) => r.response.headers.get('x-switchboard-run-id'));
    expect(new Set(ids).size).toBe(1);
    expect(third.data.choices[0]?.message.content).toBe('Hello from the fake backend.');
    expect(await runsOf(prompt)).toHaveLength(1);
    // The same key for another request is refused, never guessed at.
    await expect(defaults().chat.completions.create({ ...body, messages: [{ role: 'user', content: 'something else' }] }, key)).rejects.toMatchObject({ status: 422 });
    // A client that times out and retries with its key (three attempts) attaches to one run, which goes on.
    const slow = 'slow, retried with a key';
    const slowKey = { headers: { 'Idempotency-Key': `slow-${Date.now()}` } };
    await expect(defaults({ timeout: 300 }).chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: slow }] }, slowKey)).rejects.toThrow(/timed out/i);
    const slowRuns = await runsOf(slow);
    expect(slowRuns).toHaveLength(1);
    expect(slowRuns[0]?.status).toMatch(/running|streaming/);
    await service.cancel(slowRuns[0]?.id ?? '', 'owner');
  });

  it('accepts the request fields OpenAI defines, names those without effect, and sends the usage chunk when asked', async () => {
    const answer = await defaults()
      .chat.completions.create({
        model: 'fake',
        messages: [{ role: 'user', content: 'say hello' }],
        response_format: { type: 'text' },
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
        tool_choice: 'auto',
        logprobs: false,
        reasoning_effort: 'low',
      })
      .withResponse();
    expect(answer.data.choices[0]?.message.content).toBe('Hello from the fake backend.');
    expect(answer.response.headers.get('x-switchboard-ignored')).toBe('logprobs, response_format, tools, tool_choice, reasoning_effort');
    const stream = await defaults().chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: 'tokens 3' }], stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });
});

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1, generated from the request schemas, naming every endpoint', async () => {
    const res = await api.call('GET', '/api/v2/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body as { openapi: string; paths: Record<string, unknown>; components: { schemas: Record<string, { properties?: Record<string, unknown>; additionalProperties?: unknown }> } };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/v2/agent/run', '/api/v2/agent/stream', '/api/v2/agent/cancel', '/api/v2/agent/interrupt', '/api/v2/agent/backends', '/api/v2/agent/nodes', '/api/v2/agent/runs', '/api/v2/agent/runs/{id}', '/api/v2/chat/proxy', '/api/v2/openapi.json']));
    expect(Object.keys(doc.components.schemas.RunRequest?.properties ?? {})).toEqual(['backend', 'prompt', 'cwd', 'mode', 'schema_version', 'parent', 'keep_alive', 'limits', 'labels', 'node', 'resume', 'repo', 'ref', 'push']);
    expect(doc.components.schemas.RunRequest?.additionalProperties).toBe(false);
    // The asks, documented whether or not this server serves them (the daemon's does).
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/v2/asks', '/api/v2/asks/targets', '/api/v2/asks/{id}', '/api/v2/asks/{id}/wait', '/api/v2/asks/{id}/cancel']));
    expect(Object.keys(doc.components.schemas.AskRequest?.properties ?? {})).toEqual(['target', 'question', 'wait', 'timeout_ms', 'deliver', 'from_pane_id', 'cwd', 'from_name']);
    expect(doc.components.schemas.AskRequest?.additionalProperties).toBe(false);
    expect(Object.keys(doc.components.schemas.AskWaitRequest?.properties ?? {})).toEqual(['timeout_ms']);
    // Team runs too, with the request bodies JSON-RPC takes.
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/v2/teams', '/api/v2/teams/{id}', '/api/v2/teams/{id}/send', '/api/v2/teams/{id}/confirmations/{cid}', '/api/v2/teams/{id}/workers/{wid}/mark', '/api/v2/teams/{id}/report']));
    expect(Object.keys(doc.components.schemas.TeamRunRequest?.properties ?? {})).toEqual(['preset', 'goal', 'folder', 'agent_home', 'model_url', 'env', 'planner_calls']);
    expect(Object.keys(doc.components.schemas.TeamSendRequest?.properties ?? {})).toEqual(['worker_id', 'text', 'confirmed']);
  });
});

/** A raw request (any method, Host, headers, body), for what fetch will not send. */
function raw(method: string, target: string, options: { host?: string; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: server.port, method, path: target, headers: { Host: options.host ?? `127.0.0.1:${server.port}`, Authorization: `Bearer ${TOKEN}`, ...options.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
    });
    req.on('error', reject);
    if (options.body !== undefined) req.end(options.body);
    else req.end();
  });
}

function expectErrorShape(res: { status: number; body: string }, status?: number): void {
  if (status !== undefined) expect(res.status, res.body).toBe(status);
  expect(res.status, res.body).toBeGreaterThanOrEqual(400);
  expect(res.status, res.body).toBeLessThan(500);
  errorSchema.parse(JSON.parse(res.body));
}

describe('bad requests', () => {
  it('are answered in the error shape: token, Host, path, method, size, JSON', async () => {
    expectErrorShape(await raw('GET', '/api/v2/agent/backends', { headers: { Authorization: 'Bearer wrong' } }), 401);
    expectErrorShape(await raw('GET', '/api/v2/agent/backends', { headers: { Authorization: '' } }), 401);
    expectErrorShape(await raw('GET', '/api/v2/agent/backends', { host: 'evil.example:80' }), 403);
    expectErrorShape(await raw('GET', '/api/v2/agent/nothing-here'), 404);
    const wrong = await raw('DELETE', '/api/v2/agent/run');
    expectErrorShape(wrong, 405);
    expect(wrong.headers.allow).toBe('POST');
    // A CORS preflight from another site is refused for its Origin (the dashboard's check), and gets no CORS headers.
    const preflight = await raw('OPTIONS', '/api/v2/agent/run', { headers: { Origin: 'http://evil.example' } });
    expectErrorShape(preflight, 403);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expectErrorShape(await raw('OPTIONS', '/api/v2/agent/run'), 405);
    expectErrorShape(await raw('POST', '/api/v2/agent/run', { body: Buffer.alloc(MAX_BODY_BYTES + 10, 0x20) }), 413);
    expectErrorShape(await raw('POST', '/api/v2/agent/run', { body: '{"backend": "fake", ' }), 400);
    expectErrorShape(await raw('POST', '/api/v2/agent/run', { body: '' }), 400);
    expectErrorShape(await raw('GET', '/api/v2/agent/stream?run_id=x&run_id=y'), 400);
    expectErrorShape(await raw('GET', '/api/v2/agent/stream?run_id=../../etc'), 400);
    const unknown = await raw('POST', '/api/v2/agent/run', { body: JSON.stringify({ backend: 'fake', prompt: 'x', cwd: work, colour: 'blue' }) });
    expectErrorShape(unknown, 400);
    expect(unknown.body).toContain("unknown field 'colour'");
    const typed = await raw('POST', '/api/v2/agent/run', { body: JSON.stringify({ backend: 'fake', prompt: 42 }) });
    expectErrorShape(typed, 400);
    expect(typed.body).toContain('prompt:');
    // No CORS, ever: another site's page is refused even with the token; the server's own origin is fine.
    const foreign = await raw('GET', '/api/v2/agent/backends', { headers: { Origin: 'http://evil.example' } });
    expectErrorShape(foreign, 403);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    const ok = await raw('GET', '/api/v2/agent/backends', { headers: { Origin: `http://127.0.0.1:${server.port}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBeUndefined();
  });

  const json = fc.jsonValue({ maxDepth: 3 });
  /** Bodies near the schemas: the right keys with any values, plus unknown keys, plus anything at all. */
  const nearRun = fc.record({ backend: fc.oneof(fc.constant('fake'), json), prompt: fc.oneof(fc.constant('hello'), json), cwd: fc.oneof(fc.constant('/nonexistent'), json), mode: json, schema_version: json, parent: json, limits: json }, { requiredKeys: [] });
  const withExtra = (arb: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<unknown> => fc.oneof(arb, fc.tuple(arb, fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 2 })).map(([a, b]) => ({ ...b, ...a })), json);

  it.each([
    ['/api/v2/agent/run', withExtra(nearRun)],
    ['/api/v2/agent/cancel', withExtra(fc.record({ run_id: fc.oneof(fc.constant('run_x'), json) }, { requiredKeys: [] }))],
    ['/api/v2/agent/interrupt', withExtra(fc.record({ run_id: fc.oneof(fc.constant('run_x'), json) }, { requiredKeys: [] }))],
    ['/api/v2/chat/proxy', withExtra(fc.record({ model: fc.oneof(fc.constant('nope'), json), messages: fc.oneof(fc.constant([{ role: 'user', content: 'x' }]), json), stream: json }, { requiredKeys: [] }))],
  ])('POST %s never answers a malformed body with a 5xx', async (target, arb) => {
    await fc.assert(
      fc.asyncProperty(arb, fc.boolean(), async (body, garble) => {
        const text = JSON.stringify(body);
        const res = await raw('POST', target, { body: garble ? text.slice(0, Math.max(0, text.length - 1)) : text });
        // Valid-looking requests may start runs (the fake answers at once); anything else is refused in the shape.
        if (res.status < 300) return;
        expectErrorShape(res);
      }),
      { numRuns: 60 },
    );
  });

  it('never answers a malformed query with a 5xx', async () => {
    const targets = ['/api/v2/agent/stream', '/api/v2/agent/runs', '/api/v2/agent/runs/run_x', '/api/v2/agent/backends'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...targets), fc.dictionary(fc.constantFrom('run_id', 'schema_version', 'last_event_id', 'status', 'limit', 'before', 'events', 'after', 'x'), fc.string({ maxLength: 12 }), { maxKeys: 3 }), async (target, query) => {
        const qs = new URLSearchParams(query).toString();
        const res = await raw('GET', `${target}${qs ? `?${qs}` : ''}`);
        if (res.status === 200) return;
        expectErrorShape(res);
      }),
      { numRuns: 80 },
    );
  });
});
