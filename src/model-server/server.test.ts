import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from '../core/logger.js';
import type { Api } from './conversation.js';
import type { Scenario } from './scenario.js';
import { ModelServer, type LoggedRequest, type ModelServerOptions, type SentReply } from './server.js';

// These tests talk to a real ModelServer on 127.0.0.1 with fetch, as the agent CLIs do.

const SCENARIO: Scenario = {
  name: 'server-test',
  title: 'Server title',
  rules: [
    { match: 'say hello', steps: [{ text: 'Hello from the scripted model.' }] },
    { match: 'write a file', steps: [{ tool: 'shell', command: 'echo hi > f.txt', description: 'Write f.txt' }, { text: 'Done: wrote f.txt.' }] },
    { match: 'write notes', steps: [{ tool: 'write', path: 'notes.txt', content: 'n' }] },
    { match: 'rate limit', steps: [{ error: 429 }] },
    { match: 'overloaded', steps: [{ error: 529, message: 'scripted overload' }] },
    { match: 'crash', steps: [{ error: 500 }] },
    { match: 'chunky', steps: [{ text: 'abcdefghij', chunk_chars: 3 }] },
    { match: 'slow start', steps: [{ text: 'late answer', delay_ms: 10_000 }] },
    { match: 'slow stream', steps: [{ text: 'abcdefghij', chunk_chars: 5, chunk_delay_ms: 1_000 }] },
    { match: 'behind the gate', steps: [{ text: 'let through', wait_for: 'g1' }] },
    { steps: [{ text: 'Fallback.' }] },
  ],
};

const servers: ModelServer[] = [];
const dirs: string[] = [];

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(options: ModelServerOptions = {}): Promise<ModelServer> {
  const server = await ModelServer.start({ scenario: SCENARIO, ...options });
  servers.push(server);
  return server;
}

function post(server: ModelServer, urlPath: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(server.url + urlPath, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/** A response body parsed as JSON. */
function json(res: Response): Promise<unknown> {
  return res.json();
}

interface SseEvent {
  event: string | undefined;
  data: unknown;
}

/** Splits an SSE body into events (LF or CRLF framing). */
function parseSse(text: string): SseEvent[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split(/\r?\n/);
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice('data: '.length))
        .join('\n');
      return { event: lines.find((l) => l.startsWith('event: '))?.slice('event: '.length), data: data === '[DONE]' ? data : (JSON.parse(data) as unknown) };
    });
}

/** Lets pending I/O callbacks run (setImmediate is never faked in these tests). */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

// ---------------------------------------------------------------- one table row per API

type Body = Record<string, unknown>;

/** The value at `keys` inside parsed JSON, or undefined where the path does not exist. */
function at(value: unknown, ...keys: (string | number)[]): unknown {
  let v = value;
  for (const key of keys) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string | number, unknown>)[key];
  }
  return v;
}
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): unknown[] => (Array.isArray(v) ? (v as unknown[]) : []);
const optionalStr = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

interface ApiCase {
  api: Api;
  /** The path a client posts to. */
  path: (stream: boolean) => string;
  /** A request from the agent's main conversation, optionally after one tool result. */
  body: (prompt: string, stream: boolean, afterTool?: boolean) => Body;
  /** The text of a streamed answer. */
  streamText: (events: SseEvent[]) => string;
  /** The name of the tool a streamed answer calls, if any. */
  streamTool: (events: SseEvent[]) => string | undefined;
  /** Whether a stream ended the way the API ends one. */
  streamEnded: (events: SseEvent[]) => boolean;
  /** The text of a non-streamed answer. */
  jsonText: (body: unknown) => string;
  /** The error shape, checked on a scripted 429. */
  rateLimited: Body;
}

const datas = (events: SseEvent[]): unknown[] => events.map((e) => e.data).filter((d) => typeof d === 'object' && d !== null);
const geminiParts = (events: SseEvent[]): unknown[] => datas(events).flatMap((d) => list(at(d, 'candidates', 0, 'content', 'parts')));

const CASES: ApiCase[] = [
  {
    api: 'anthropic',
    path: () => '/v1/messages?beta=true',
    body: (prompt, stream, afterTool) => ({
      model: 'claude-test',
      stream,
      max_tokens: 1024,
      system: 'Working directory: /home/dev/work-claude',
      tools: [{ name: 'Bash', input_schema: {} }, { name: 'Write', input_schema: {} }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: prompt }] },
        ...(afterTool
          ? [
              { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {} }] },
              { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
            ]
          : []),
      ],
    }),
    streamText: (events) =>
      datas(events)
        .filter((d) => at(d, 'type') === 'content_block_delta' && at(d, 'delta', 'type') === 'text_delta')
        .map((d) => str(at(d, 'delta', 'text')))
        .join(''),
    streamTool: (events) => optionalStr(at(datas(events).find((d) => at(d, 'type') === 'content_block_start' && at(d, 'content_block', 'type') === 'tool_use'), 'content_block', 'name')),
    streamEnded: (events) => events.at(-1)?.event === 'message_stop',
    jsonText: (body) =>
      list(at(body, 'content'))
        .filter((b) => at(b, 'type') === 'text')
        .map((b) => str(at(b, 'text')))
        .join(''),
    rateLimited: { type: 'error', error: { type: 'rate_limit_error', message: 'Rate limit exceeded (scripted)' } },
  },
  {
    api: 'openai-responses',
    path: () => '/v1/responses',
    body: (prompt, stream, afterTool) => ({
      model: 'gpt-5.5',
      stream,
      store: false,
      tools: [{ type: 'function', name: 'exec_command' }, { type: 'custom', name: 'apply_patch' }],
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>\n<cwd>/home/dev/work-codex</cwd>\n</environment_context>' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: prompt }] },
        ...(afterTool ? [{ type: 'function_call', name: 'exec_command', call_id: 'call_1', arguments: '{}' }, { type: 'function_call_output', call_id: 'call_1', output: 'ok' }] : []),
      ],
    }),
    streamText: (events) =>
      datas(events)
        .filter((d) => at(d, 'type') === 'response.output_text.delta')
        .map((d) => str(at(d, 'delta')))
        .join(''),
    streamTool: (events) => optionalStr(at(datas(events).find((d) => at(d, 'type') === 'response.output_item.done' && at(d, 'item', 'type') === 'function_call'), 'item', 'name')),
    streamEnded: (events) => events.at(-1)?.event === 'response.completed',
    jsonText: (body) =>
      list(at(body, 'output'))
        .filter((o) => at(o, 'type') === 'message')
        .flatMap((o) => list(at(o, 'content')))
        .map((c) => str(at(c, 'text')))
        .join(''),
    rateLimited: { error: { message: 'Rate limit exceeded (scripted)', type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null } },
  },
  {
    api: 'openai-chat',
    path: () => '/v1/chat/completions',
    body: (prompt, stream, afterTool) => ({
      model: 'fake-model',
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
      tools: ['bash', 'edit', 'write'].map((name) => ({ type: 'function', function: { name, parameters: {} } })),
      messages: [
        { role: 'system', content: 'You are opencode.' },
        { role: 'user', content: prompt },
        ...(afterTool
          ? [
              { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
              { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
            ]
          : []),
      ],
    }),
    streamText: (events) =>
      datas(events)
        .map((d) => str(at(d, 'choices', 0, 'delta', 'content')))
        .join(''),
    streamTool: (events) => datas(events).map((d) => optionalStr(at(d, 'choices', 0, 'delta', 'tool_calls', 0, 'function', 'name'))).find((n) => n !== undefined),
    streamEnded: (events) => events.at(-1)?.data === '[DONE]',
    jsonText: (body) => str(at(body, 'choices', 0, 'message', 'content')),
    rateLimited: { error: { message: 'Rate limit exceeded (scripted)', type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', param: null } },
  },
  {
    api: 'gemini',
    path: (stream) => (stream ? '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse' : '/v1beta/models/gemini-2.5-flash:generateContent'),
    body: (prompt, _stream, afterTool) => ({
      contents: [
        { role: 'user', parts: [{ text: prompt }] },
        ...(afterTool
          ? [
              { role: 'model', parts: [{ functionCall: { name: 'run_shell_command', args: {} } }] },
              { role: 'user', parts: [{ functionResponse: { name: 'run_shell_command', response: { output: 'ok' } } }] },
            ]
          : []),
      ],
      tools: [{ functionDeclarations: [{ name: 'run_shell_command' }, { name: 'write_file' }] }],
    }),
    streamText: (events) =>
      geminiParts(events)
        .map((p) => str(at(p, 'text')))
        .join(''),
    streamTool: (events) => optionalStr(at(geminiParts(events).find((p) => at(p, 'functionCall') !== undefined), 'functionCall', 'name')),
    streamEnded: (events) => at(datas(events).at(-1), 'candidates', 0, 'finishReason') === 'STOP',
    jsonText: (body) =>
      list(at(body, 'candidates', 0, 'content', 'parts'))
        .map((p) => str(at(p, 'text')))
        .join(''),
    rateLimited: { error: { code: 429, message: 'Rate limit exceeded (scripted)', status: 'RESOURCE_EXHAUSTED' } },
  },
];

const SHELL_TOOL: Record<Api, string> = { anthropic: 'Bash', 'openai-responses': 'exec_command', 'openai-chat': 'bash', gemini: 'run_shell_command' };

async function streamed(server: ModelServer, c: ApiCase, prompt: string, afterTool = false): Promise<SseEvent[]> {
  const res = await post(server, c.path(true), c.body(prompt, true, afterTool));
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  return parseSse(await res.text());
}

describe.each(CASES)('ModelServer: $api', (c) => {
  it('streams the scripted text over SSE and ends the stream the way the API does', async () => {
    const server = await start();
    const events = await streamed(server, c, 'say hello please');
    expect(c.streamText(events)).toBe('Hello from the scripted model.');
    expect(c.streamEnded(events)).toBe(true);
  });

  it('answers the same prompt with one JSON body when not streaming', async () => {
    const server = await start();
    const res = await post(server, c.path(false), c.body('say hello please', false));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(c.jsonText(await json(res))).toBe('Hello from the scripted model.');
  });

  // The step comes from the request: no tool result yet → the call; a tool result → the next step.
  it("calls the client's shell tool, then answers the final text once the tool result is in the request", async () => {
    const server = await start();
    const first = await streamed(server, c, 'write a file please');
    expect(c.streamTool(first)).toBe(SHELL_TOOL[c.api]);
    expect(c.streamText(first)).toBe('');
    const second = await streamed(server, c, 'write a file please', true);
    expect(c.streamTool(second)).toBeUndefined();
    expect(c.streamText(second)).toBe('Done: wrote f.txt.');
  });

  // A client that retries must get the same call again, not the script's next step.
  it('answers a repeated request the same way (no request counter)', async () => {
    const server = await start();
    await streamed(server, c, 'say hello please');
    expect(c.streamTool(await streamed(server, c, 'write a file please'))).toBe(SHELL_TOOL[c.api]);
    expect(c.streamTool(await streamed(server, c, 'write a file please'))).toBe(SHELL_TOOL[c.api]);
    expect(server.modelRequests().map((r) => r.plan?.step)).toEqual([0, 0, 0]);
  });

  it('holds an answer until its gate is opened, and holds none once it is open', async () => {
    const server = await start();
    let answered = false;
    const pending = streamed(server, c, 'behind the gate').then((events) => {
      answered = true;
      return events;
    });
    await vi.waitFor(() => expect(server.heldAt('g1')).toBe(1));
    expect(answered).toBe(false);
    expect((await post(server, '/__scripted/gates/g1', {})).status).toBe(200);
    expect(c.streamText(await pending)).toBe('let through');
    expect(server.heldAt('g1')).toBe(0);
    expect(c.streamText(await streamed(server, c, 'behind the gate'))).toBe('let through');
  });

  it('lets held answers go when it closes', async () => {
    const server = await start();
    const pending = post(server, c.path(true), c.body('behind the gate', true)).then((res) => res.text()).catch(() => 'closed');
    await vi.waitFor(() => expect(server.heldAt('g1')).toBe(1));
    await server.close();
    expect(server.heldAt('g1')).toBe(0);
    await pending;
  });

  it('splits streamed text into pieces of chunk_chars characters', async () => {
    const server = await start();
    const events = await streamed(server, c, 'chunky');
    expect(c.streamText(events)).toBe('abcdefghij');
    // Four pieces for ten characters in threes: count the events that carry text.
    const pieces = events.filter((e) => c.streamText([e]) !== '');
    expect(pieces.map((e) => c.streamText([e]))).toEqual(['abc', 'def', 'ghi', 'j']);
  });

  it("answers a scripted 429 with status 429 in the API's error shape, even when streaming", async () => {
    const server = await start();
    const res = await post(server, c.path(true), c.body('rate limit now', true));
    expect(res.status).toBe(429);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await json(res)).toEqual(c.rateLimited);
  });

  // Only Anthropic has a 529; the other APIs say overloaded with 503.
  it('answers a scripted overload with the API’s overload status and the scripted message', async () => {
    const server = await start();
    const res = await post(server, c.path(true), c.body('overloaded', true));
    expect(res.status).toBe(c.api === 'anthropic' ? 529 : 503);
    expect(JSON.stringify(await json(res))).toContain('scripted overload');
  });

  it('answers a scripted 500 with status 500', async () => {
    const server = await start();
    const res = await post(server, c.path(false), c.body('crash', false));
    expect(res.status).toBe(500);
    expect(JSON.stringify(await json(res))).toContain('Internal server error (scripted)');
  });
});

describe('ModelServer: routes', () => {
  // Base URLs are configured with and without /v1, so both forms must reach the model.
  it.each<[string, string, Body]>([
    ['/messages', 'anthropic', { messages: [{ role: 'user', content: 'say hello' }] }],
    ['/responses', 'openai-responses', { input: 'say hello' }],
    ['/chat/completions', 'openai-chat', { messages: [{ role: 'user', content: 'say hello' }] }],
    ['/v1alpha/models/m:generateContent', 'gemini', { contents: [{ parts: [{ text: 'say hello' }] }] }],
    ['/v1/models/m:generateContent', 'gemini', { contents: [{ parts: [{ text: 'say hello' }] }] }],
  ])('routes POST %s to %s', async (urlPath, api, body) => {
    const server = await start();
    const res = await post(server, urlPath, body);
    expect(res.status).toBe(200);
    await res.text();
    expect(server.requests.at(-1)).toMatchObject({ api, plan: { role: 'main', prompt: 'say hello' } });
  });

  it('takes the Gemini model and streaming from the path, not the body', async () => {
    const server = await start();
    const res = await post(server, '/v1beta/models/gemini-from-path:generateContent', { model: 'body-model', stream: true, contents: [{ parts: [{ text: 'say hello' }] }] });
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await json(res)).toMatchObject({ modelVersion: 'gemini-from-path' });
  });

  it("answers with the request's model name", async () => {
    const server = await start();
    const res = await post(server, '/v1/messages', { model: 'claude-opus-test', messages: [{ role: 'user', content: 'say hello' }] });
    expect(await json(res)).toMatchObject({ model: 'claude-opus-test' });
  });
});

describe('ModelServer: probes', () => {
  // Claude Code checks reachability with HEAD / before anything else.
  it('answers HEAD / with 200 and no body', async () => {
    const server = await start();
    const res = await fetch(`${server.url}/`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });

  it.each(['/', '/v1', '/v1/'])('answers GET %s with who it is', async (urlPath) => {
    const server = await start();
    const res = await fetch(server.url + urlPath);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ ok: true, name: 'switchboard scripted model' });
  });

  it.each(['/v1/messages/count_tokens', '/messages/count_tokens'])('counts tokens at %s, more for a longer request', async (urlPath) => {
    const server = await start();
    const count = async (content: string): Promise<number> => Number(at(await json(await post(server, urlPath, { messages: [{ role: 'user', content }] })), 'input_tokens'));
    const short = await count('hi');
    expect(short).toBeGreaterThan(0);
    expect(await count('hi '.repeat(400))).toBeGreaterThan(short);
    // A token count is a probe, not a model turn.
    expect(server.modelRequests()).toEqual([]);
  });

  it('counts tokens for Gemini', async () => {
    const server = await start();
    const res = await post(server, '/v1beta/models/gemini-2.5-flash:countTokens', { contents: [{ parts: [{ text: 'hello' }] }] });
    expect(res.status).toBe(200);
    expect(at(await json(res), 'totalTokens')).toBeGreaterThan(0);
  });

  it('lists an Anthropic model when asked with anthropic-version', async () => {
    const server = await start();
    const body = await json(await fetch(`${server.url}/v1/models`, { headers: { 'anthropic-version': '2023-06-01' } }));
    expect(body).toMatchObject({ data: [{ id: 'claude-scripted', type: 'model' }], has_more: false, first_id: 'claude-scripted', last_id: 'claude-scripted' });
  });

  it.each(['/v1/models', '/models'])('lists an OpenAI model at %s', async (urlPath) => {
    const server = await start();
    expect(await json(await fetch(server.url + urlPath))).toEqual({ object: 'list', data: [{ id: 'scripted-model', object: 'model', created: 0, owned_by: 'switchboard' }] });
  });

  it('lists a Gemini model when asked with x-goog-api-key', async () => {
    const server = await start();
    const body = await json(await fetch(`${server.url}/v1beta/models`, { headers: { 'x-goog-api-key': 'fake-key' } }));
    expect(body).toMatchObject({ models: [{ name: 'models/gemini-2.5-flash', supportedGenerationMethods: ['generateContent', 'streamGenerateContent'] }] });
  });

  // Gemini CLI may pass its key as ?key= instead of the header; the route is the path alone.
  it.each(['/v1beta/models?key=fake-key', '/v1alpha/models?key=fake-key&pageSize=50', '/v1/models?key=fake-key'])('lists a Gemini model at %s', async (urlPath) => {
    const server = await start();
    const res = await fetch(server.url + urlPath);
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ models: [{ name: 'models/gemini-2.5-flash' }] });
  });

  it('logs probes without a plan, and leaves them out of modelRequests', async () => {
    const server = await start();
    await (await fetch(`${server.url}/`, { method: 'HEAD' })).text();
    await (await fetch(`${server.url}/v1/models`)).text();
    await (await post(server, '/v1/messages', { messages: [{ role: 'user', content: 'say hello' }] })).text();
    expect(server.requests.map((r) => [r.method, r.path, r.api, r.plan === undefined])).toEqual([
      ['HEAD', '/', undefined, true],
      ['GET', '/v1/models', undefined, true],
      ['POST', '/v1/messages', 'anthropic', false],
    ]);
    expect(server.modelRequests().map((r) => r.path)).toEqual(['/v1/messages']);
  });
});

describe('ModelServer: side requests over HTTP', () => {
  // Claude Code's title request has no tools and asks for JSON in its wording.
  it("answers Claude Code's title request with {\"title\": …} and logs it as a title", async () => {
    const server = await start();
    const res = await post(server, '/v1/messages', {
      stream: false,
      system: [{ type: 'text', text: 'Generate a concise, sentence-case title for this conversation. Return JSON with a single "title" field.' }],
      messages: [{ role: 'user', content: 'write a file please' }],
    });
    const text = str(at(await json(res), 'content', 0, 'text'));
    expect(JSON.parse(text)).toEqual({ title: 'Server title' });
    expect(server.requests.at(-1)?.plan).toMatchObject({ role: 'title', rule: -1, step: -1 });
  });

  // JSON mode without a schema: the answer must parse as a JSON object.
  it.each<[string, string, Body, (body: unknown) => string]>([
    ['OpenAI Chat response_format json_object', '/v1/chat/completions', { stream: false, response_format: { type: 'json_object' }, messages: [{ role: 'user', content: 'say hello in json' }] }, (b) => str(at(b, 'choices', 0, 'message', 'content'))],
    ['OpenAI Responses text.format json_object', '/v1/responses', { stream: false, text: { format: { type: 'json_object' } }, input: 'say hello in json' }, (b) => CASES[1]!.jsonText(b)],
    ['Gemini responseMimeType application/json', '/v1beta/models/m:generateContent', { generationConfig: { responseMimeType: 'application/json' }, contents: [{ role: 'user', parts: [{ text: 'say hello in json' }] }] }, (b) => CASES[3]!.jsonText(b)],
  ])('answers %s with a JSON object', async (_label, urlPath, body, textOf) => {
    const server = await start();
    const res = await post(server, urlPath, body);
    expect(res.status).toBe(200);
    expect(JSON.parse(textOf(await json(res)))).toEqual({ text: 'Hello from the scripted model.' });
    expect(server.requests.at(-1)?.plan).toMatchObject({ role: 'main', reply: 'json' });
  });

  // Gemini CLI's model router: JSON text that fits the schema, with the right types.
  it("answers Gemini CLI's router request with JSON fitting the schema", async () => {
    const server = await start();
    const res = await post(server, '/v1beta/models/gemini-2.5-flash-lite:generateContent', {
      contents: [{ role: 'user', parts: [{ text: 'write a file please' }] }],
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: { type: 'object', properties: { complexity_reasoning: { type: 'string' }, complexity_score: { type: 'integer' } } } },
    });
    const text = str(at(await json(res), 'candidates', 0, 'content', 'parts', 0, 'text'));
    expect(JSON.parse(text)).toEqual({ complexity_reasoning: 'scripted', complexity_score: 1 });
    expect(server.requests.at(-1)?.plan).toMatchObject({ role: 'structured', reply: 'json' });
  });

  // A title request between two turns must not move the main conversation's script on.
  it('does not shift the script when a title request comes in between', async () => {
    const server = await start();
    const c = CASES[2]!;
    expect(c.streamTool(await streamed(server, c, 'write a file please'))).toBe('bash');
    await (await post(server, '/v1/chat/completions', { messages: [{ role: 'user', content: 'Generate a title for this conversation' }] })).text();
    expect(c.streamTool(await streamed(server, c, 'write a file please'))).toBe('bash');
    expect(c.streamText(await streamed(server, c, 'write a file please', true))).toBe('Done: wrote f.txt.');
  });
});

describe('ModelServer: the request log', () => {
  it('records each model request with its headers, body and plan', async () => {
    const server = await start();
    const body = CASES[0]!.body('write a file please', true);
    await (await post(server, '/v1/messages?beta=true', body, { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'claude-code-20250219', 'user-agent': 'claude-cli/2.1.197 (external, sdk-cli)', 'x-api-key': 'sk-ant-secret-value' })).text();
    const log = (await json(await fetch(`${server.url}/__scripted/requests`))) as LoggedRequest[];
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      seq: 1,
      method: 'POST',
      path: '/v1/messages?beta=true',
      api: 'anthropic',
      headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'claude-code-20250219', 'user-agent': 'claude-cli/2.1.197 (external, sdk-cli)', 'content-type': 'application/json', 'x-api-key': '(present)' },
      body,
      plan: { role: 'main', rule: 1, step: 0, reply: 'tool', status: 200, prompt: 'write a file please', stepsDone: 0, tools: ['Bash', 'Write'] },
    });
    expect(Number.isNaN(Date.parse(log[0]!.time))).toBe(false);
  });

  // The log is served over HTTP and may be written to disk: no key may leak into it.
  it('notes credentials as present without their values', async () => {
    const server = await start();
    await (await post(server, '/v1/chat/completions', { messages: [] }, { authorization: 'Bearer sk-secret-bearer' })).text();
    await (await post(server, '/v1beta/models/m:generateContent', { contents: [] }, { 'x-goog-api-key': 'goog-secret-key' })).text();
    const log = await (await fetch(`${server.url}/__scripted/requests`)).text();
    expect(log).not.toContain('sk-secret-bearer');
    expect(log).not.toContain('goog-secret-key');
    expect(server.requests.map((r) => r.headers.authorization ?? r.headers['x-goog-api-key'])).toEqual(['(present)', '(present)']);
  });

  it('notes a key given in the query as present without its value', async () => {
    const server = await start();
    await (await fetch(`${server.url}/v1beta/models?key=goog-query-secret&pageSize=5`)).text();
    await (await post(server, '/v1beta/models/m:generateContent?alt=sse&key=goog-query-secret', { contents: [] })).text();
    expect(JSON.stringify(server.requests)).not.toContain('goog-query-secret');
    expect(server.requests.map((r) => r.path)).toEqual(['/v1beta/models?key=(present)&pageSize=5', '/v1beta/models/m:generateContent?alt=sse&key=(present)']);
  });

  // A rule index must mean that rule matched; the stand-in for "none matched" is null, not -1.
  it('records rule null when no pattern fits the prompt', async () => {
    const server = await start({ scenario: { name: 'strict', rules: [{ match: '^alpha$', steps: [{ text: 'A' }] }, { match: '^beta$', steps: [{ text: 'B' }] }] } });
    expect(CASES[0]!.jsonText(await json(await post(server, '/v1/messages', CASES[0]!.body('gamma', false))))).toBe('B');
    expect(server.requests.at(-1)?.plan).toMatchObject({ role: 'main', rule: null, step: 0 });
    const log = (await json(await fetch(`${server.url}/__scripted/requests`))) as LoggedRequest[];
    expect(log[0]?.plan?.rule).toBeNull();
  });

  it('records the reply status an error step was rendered with', async () => {
    const server = await start();
    await (await post(server, CASES[3]!.path(true), CASES[3]!.body('overloaded', true))).text();
    expect(server.requests[0]?.plan).toMatchObject({ reply: 'error', status: 503 });
  });

  it('numbers requests in order and leaves its own control routes out', async () => {
    const server = await start();
    await (await fetch(`${server.url}/`)).text();
    await (await fetch(`${server.url}/__scripted/requests`)).text();
    await (await post(server, '/v1/responses', { input: 'say hello' })).text();
    const log = (await json(await fetch(`${server.url}/__scripted/requests`))) as LoggedRequest[];
    expect(log.map((r) => [r.seq, r.path])).toEqual([
      [1, '/'],
      [2, '/v1/responses'],
    ]);
  });

  it('clears the log on DELETE /__scripted/requests', async () => {
    const server = await start();
    await (await post(server, '/v1/responses', { input: 'say hello' })).text();
    const res = await fetch(`${server.url}/__scripted/requests`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual([]);
    expect(server.requests).toEqual([]);
  });

  it('clears the log with clearRequests() and filters model requests by API', async () => {
    const server = await start();
    await (await post(server, '/v1/responses', { input: 'say hello' })).text();
    await (await post(server, '/v1/chat/completions', { messages: [{ role: 'user', content: 'say hello' }] })).text();
    expect(server.modelRequests('openai-chat').map((r) => r.api)).toEqual(['openai-chat']);
    expect(server.modelRequests('gemini')).toEqual([]);
    server.clearRequests();
    expect(server.modelRequests()).toEqual([]);
  });

  it('appends every request to the log file as JSON lines', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-model-log-'));
    dirs.push(dir);
    const logFile = path.join(dir, 'requests.jsonl');
    const server = await start({ logFile });
    await (await fetch(`${server.url}/`, { method: 'HEAD' })).text();
    await (await post(server, '/v1/messages', { messages: [{ role: 'user', content: 'say hello' }] })).text();
    const lines = readFileSync(logFile, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as unknown);
    expect(lines).toEqual(JSON.parse(JSON.stringify(server.requests)));
    expect(lines).toHaveLength(2);
  });
});

describe('ModelServer: replacing the scenario', () => {
  const replacement: Scenario = { name: 'replacement', rules: [{ steps: [{ text: 'Replaced.' }] }] };
  const ask = async (server: ModelServer): Promise<string> => CASES[0]!.jsonText(await json(await post(server, '/v1/messages', CASES[0]!.body('say hello', false))));

  it('takes a new scenario from POST /__scripted/scenario', async () => {
    const server = await start();
    const res = await post(server, '/__scripted/scenario', replacement);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ ok: true, name: 'replacement' });
    expect(await ask(server)).toBe('Replaced.');
  });

  it('rejects an invalid scenario with 400, naming the field, and keeps the old one', async () => {
    const server = await start();
    const res = await post(server, '/__scripted/scenario', { name: 'bad', rules: [] });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ error: { message: 'invalid scenario: rules: Too small: expected array to have >=1 items' } });
    expect(await ask(server)).toBe('Hello from the scripted model.');
  });

  it('rejects a scenario that is not JSON with 400 and keeps serving', async () => {
    const server = await start();
    const res = await post(server, '/__scripted/scenario', '{"name": "half');
    expect(res.status).toBe(400);
    expect(at(await json(res), 'error', 'message')).toMatch(/^invalid scenario: .*expected object, received string/);
    expect(await ask(server)).toBe('Hello from the scripted model.');
  });

  it('takes a new scenario from setScenario()', async () => {
    const server = await start();
    server.setScenario(replacement);
    expect(await ask(server)).toBe('Replaced.');
  });

  it('says hello by default when started without a scenario', async () => {
    const server = await ModelServer.start();
    servers.push(server);
    expect(await ask(server)).toBe('Hello from the scripted model.');
  });
});

describe('ModelServer: bad requests', () => {
  it('answers an unknown route with 404 naming it, and keeps serving', async () => {
    const server = await start();
    const res = await fetch(`${server.url}/no/such/route?x=1`);
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ error: { message: 'the scripted model does not serve GET /no/such/route' } });
    expect(server.requests.at(-1)).toMatchObject({ method: 'GET', path: '/no/such/route?x=1', api: undefined });
    expect(await (await post(server, '/v1/responses', { input: 'say hello' })).json()).toMatchObject({ status: 'completed' });
  });

  // Model routes take POST only; anything else is an unknown route, not a model turn.
  it.each(['GET', 'PUT', 'DELETE'])('answers %s on a model route with 404', async (method) => {
    const server = await start();
    const res = await fetch(`${server.url}/v1/chat/completions`, { method, ...(method === 'PUT' ? { body: '{}' } : {}) });
    expect(res.status).toBe(404);
    expect(at(await json(res), 'error', 'message')).toBe(`the scripted model does not serve ${method} /v1/chat/completions`);
    expect(server.modelRequests()).toEqual([]);
  });

  // A malformed body is logged as sent and does not take the server down (its 400 is checked below).
  it.each(CASES)('keeps serving $api after a body that is not JSON, logging the raw text', async (c) => {
    const server = await start();
    const res = await post(server, c.path(true), '{"messages": [ {"role": "user"');
    await res.text();
    expect(server.requests.at(-1)?.body).toBe('{"messages": [ {"role": "user"');
    expect(c.streamText(await streamed(server, c, 'say hello please'))).toBe('Hello from the scripted model.');
  });

  // A body the real API would refuse gets that API's own 400, not a turn planned from nothing.
  const invalidRequest: Record<Api, (message: unknown) => Body> = {
    anthropic: (message) => ({ type: 'error', error: { type: 'invalid_request_error', message } }),
    'openai-responses': (message) => ({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param: null } }),
    'openai-chat': (message) => ({ error: { message, type: 'invalid_request_error', code: 'invalid_request_error', param: null } }),
    gemini: (message) => ({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }),
  };
  const badBodies: [string, string, string][] = [
    ['malformed JSON', '{"messages": [ {"role": "user"', 'the request body is not valid JSON: '],
    ['a JSON array', '[{"role": "user"}]', 'the request body must be a JSON object, not an array'],
    ['a JSON string', '"say hello"', 'the request body must be a JSON object, not a string'],
    ['JSON null', 'null', 'the request body must be a JSON object, not null'],
    ['an empty body', '', 'the request body is empty; expected a JSON object'],
  ];
  it.each(CASES.flatMap((c) => badBodies.map(([label, body, message]) => ({ api: c.api, c, label, body, message }))))(
    'answers $api $label with 400 in its error shape',
    async ({ c, body, message }) => {
      const server = await start();
      const res = await post(server, c.path(true), body);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(await json(res)).toEqual(invalidRequest[c.api](expect.stringMatching(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))));
    },
  );

  it('logs a rejected body with why, and leaves it out of modelRequests', async () => {
    const server = await start();
    await (await post(server, '/v1/chat/completions', '[]')).text();
    expect(server.requests.at(-1)).toMatchObject({ method: 'POST', path: '/v1/chat/completions', api: 'openai-chat', body: [], rejected: { status: 400, message: 'the request body must be a JSON object, not an array' } });
    expect(server.requests.at(-1)?.plan).toBeUndefined();
    expect(server.modelRequests()).toEqual([]);
  });

  it('answers 500 when the handler fails, logs it, and keeps serving', async () => {
    const errors: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn() {}, error: (message) => errors.push(message), child: () => logger };
    const server = await start({ logger });
    // Scenarios set in code skip validation; a broken pattern fails inside the request handler.
    server.setScenario({ name: 'broken', rules: [{ match: '(', steps: [{ text: 'x' }] }] });
    const res = await post(server, '/v1/messages', { messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(500);
    expect(await json(res)).toEqual({ error: { message: 'scripted model failure' } });
    expect(errors).toEqual(['scripted model request failed']);
    server.setScenario(SCENARIO);
    expect(CASES[0]!.jsonText(await json(await post(server, '/v1/messages', CASES[0]!.body('say hello', false))))).toBe('Hello from the scripted model.');
  });
});

describe('ModelServer: working directory', () => {
  const writeBody = (system: string): Body => ({ system, tools: [{ name: 'Bash' }, { name: 'Write' }], messages: [{ role: 'user', content: 'write notes' }] });
  const writtenPath = async (server: ModelServer, system: string): Promise<unknown> => {
    const body = await json(await post(server, '/v1/messages', writeBody(system)));
    return at(list(at(body, 'content')).find((b) => at(b, 'type') === 'tool_use'), 'input', 'file_path');
  };

  it('resolves relative paths against the cwd option when the request names no directory', async () => {
    const server = await start({ cwd: '/srv/agent' });
    expect(await writtenPath(server, 'You are Claude Code.')).toBe('/srv/agent/notes.txt');
  });

  it("prefers the request's own working directory", async () => {
    const server = await start({ cwd: '/srv/agent' });
    expect(await writtenPath(server, 'Working directory: /home/dev/work')).toBe('/home/dev/work/notes.txt');
  });
});

describe('ModelServer: lifecycle', () => {
  it('listens on 127.0.0.1 and reports its URL', async () => {
    const server = await start();
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  it('stops accepting connections once closed', async () => {
    const server = await start();
    const url = server.url;
    await (await fetch(`${url}/`)).text();
    await server.close();
    await expect(fetch(`${url}/`)).rejects.toThrow();
  });

  it('fails to start on a port already in use', async () => {
    const server = await start();
    await expect(ModelServer.start({ port: server.port })).rejects.toThrow(/EADDRINUSE/);
  });
});

// Delays are checked without a clock: setTimeout is faked, so a scripted pause holds until the test
// advances fake time, while the I/O that fetch and the server need still runs for real.
describe('ModelServer: scripted delays', () => {
  const fakeTimeouts = (): void => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  };

  it('holds the answer for delay_ms while answering other requests', async () => {
    const server = await start();
    fakeTimeouts();
    let answered = false;
    const slow = post(server, '/v1/messages', { messages: [{ role: 'user', content: 'slow start' }] }).then(async (res) => {
      answered = true;
      return json(res);
    });
    while (server.modelRequests().length === 0) await turn();
    // A whole other request and answer goes through while the slow one waits.
    expect(CASES[0]!.jsonText(await json(await post(server, '/v1/messages', CASES[0]!.body('say hello', false))))).toBe('Hello from the scripted model.');
    expect(answered).toBe(false);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(CASES[0]!.jsonText(await slow)).toBe('late answer');
  });

  it('pauses chunk_delay_ms between streamed pieces', async () => {
    const server = await start();
    fakeTimeouts();
    const res = await post(server, '/v1/chat/completions', { stream: true, messages: [{ role: 'user', content: 'slow stream' }] });
    // Headers and the first piece come at once.
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let received = '';
    while (!received.includes('"content":"abcde"')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended early: ${received}`);
      received += decoder.decode(value, { stream: true });
    }
    // The second piece waits for the pause: a read stays pending while another request is answered.
    let next: string | undefined;
    const pending = reader.read().then(({ value }) => (next = decoder.decode(value, { stream: true })));
    await (await post(server, '/', {})).text();
    await turn();
    expect(next).toBeUndefined();
    expect(received).not.toContain('[DONE]');
    // Once the pause has passed, the rest of the stream arrives.
    await vi.advanceTimersByTimeAsync(1_000);
    await pending;
    received += next ?? '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      received += decoder.decode(value, { stream: true });
    }
    expect(CASES[2]!.streamText(parseSse(received))).toBe('abcdefghij');
    expect(received.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('ends a stream still in its pauses when the server closes', async () => {
    const server = await start();
    fakeTimeouts();
    const res = await post(server, '/v1/chat/completions', { stream: true, messages: [{ role: 'user', content: 'slow stream' }] });
    const reading = res.text();
    while (server.modelRequests().length === 0) await turn();
    await server.close();
    await expect(reading).rejects.toThrow();
  });
});

describe('ModelServer: when replies were written', () => {
  const clock = (): number => performance.timeOrigin + performance.now();

  it('reports a reply once it has gone out, with when its writing began and ended, after its gate', async () => {
    const sent: SentReply[] = [];
    const server = await start({ onReplySent: (reply) => sent.push(reply) });
    const before = clock();
    const pending = post(server, '/v1/chat/completions', { stream: true, messages: [{ role: 'user', content: 'behind the gate' }] }).then((res) => res.text());
    await vi.waitFor(() => expect(server.heldAt('g1')).toBe(1));
    // Held at its gate: nothing written yet.
    expect(sent).toEqual([]);
    server.openGate('g1');
    expect(CASES[2]!.streamText(parseSse(await pending))).toBe('let through');
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    const [reply] = sent as [SentReply];
    expect(reply.request).toBe(server.modelRequests().at(-1));
    expect(reply.firstWriteAt).toBeGreaterThanOrEqual(before);
    expect(reply.endAt).toBeGreaterThanOrEqual(reply.firstWriteAt);
    // Probes are not replies of the model.
    await (await fetch(`${server.url}/`)).text();
    expect(sent).toHaveLength(1);
  });

});
