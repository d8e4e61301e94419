import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConversationView } from './conversation.js';
import type { Reply, Timing } from './planner.js';
import type { ToolCall } from './tools.js';
import { renderAnthropic, renderGemini, renderOpenAiChat, renderOpenAiResponses, type Rendered } from './wire.js';

const wireDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'fixtures', 'cli-captures', 'wire');

interface SseEvent {
  /** The `event:` line, when the stream has them. */
  event: string | undefined;
  /** The parsed `data:` payload, or the raw text for `[DONE]`. */
  data: unknown;
}

/** Splits an SSE stream into events (blank-line separated, LF or CRLF). */
function parseSse(text: string): SseEvent[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split(/\r?\n/);
      const event = lines.find((l) => l.startsWith('event: '))?.slice('event: '.length);
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice('data: '.length))
        .join('\n');
      return { event, data: data === '[DONE]' ? data : (JSON.parse(data) as unknown) };
    });
}

const fixture = (name: string): string => readFileSync(path.join(wireDir, name), 'utf8');

/** The body of a rendered response as one string (pauses dropped). */
const bodyText = (r: Rendered): string => r.body.filter((p): p is string => typeof p === 'string').join('');

type Shape = string | Shape[] | { [key: string]: Shape };

/** The structure of a JSON value: keys and value types, without the values (ids, times, counts). */
function shapeOf(value: unknown): Shape {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.map(shapeOf);
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shapeOf(v)]));
  return typeof value;
}

/** Each event as its `event:` name and the shape of its data, for comparing with a capture. */
const shapes = (events: SseEvent[]): { event: string | undefined; data: Shape }[] => events.map((e) => ({ event: e.event, data: shapeOf(e.data) }));

const timing = (overrides: Partial<Timing> = {}): Timing => ({ delayMs: 0, chunkChars: 24, chunkDelayMs: 0, ...overrides });

function view(overrides: Partial<ConversationView> = {}): ConversationView {
  return { api: 'anthropic', tools: [], namespaced: [], toolSearches: 0, prompt: 'say hello', stepsDone: 0, lastToolResult: '', cwd: undefined, text: 'say hello', jsonSchema: undefined, wantsJson: false, stream: true, model: undefined, ...overrides };
}

// The captures split "Hello from fake model" into four deltas; six characters a chunk does too.
const HELLO: Reply = { kind: 'text', text: 'Hello from fake model', timing: timing({ chunkChars: 6 }) };
const CAPTURED_COMMAND = 'echo hello-from-tool > tool_out.txt && cat tool_out.txt';
const toolReply = (call: ToolCall, text?: string): Reply => ({ kind: 'tool', text, call, timing: timing() });
const errorReply = (status: number, message = 'scripted failure'): Reply => ({ kind: 'error', status, message, timing: timing() });

/** Records of `type` in an SSE body, by their data. */
function dataOf(events: SseEvent[], type: string): Record<string, unknown>[] {
  return events.filter((e) => (e.data as { type?: unknown }).type === type).map((e) => e.data as Record<string, unknown>);
}

describe('renderAnthropic', () => {
  it('streams text with the same events and fields as the captured stream', () => {
    const rendered = renderAnthropic(HELLO, view({ model: 'claude-x' }), 'abc');
    expect(shapes(parseSse(bodyText(rendered)))).toEqual(shapes(parseSse(fixture('anthropic-text.sse'))));
  });

  it('streams a tool call with the same events and fields as the captured stream', () => {
    const call: ToolCall = { kind: 'function', name: 'Bash', args: { command: CAPTURED_COMMAND, description: 'Write a file via shell' } };
    const ours = parseSse(bodyText(renderAnthropic(toolReply(call), view(), 'abc')));
    const captured = parseSse(fixture('anthropic-tool_use.sse'));
    expect(shapes(ours)).toEqual(shapes(captured));
    // The arguments travel as one JSON string; they must parse to what the capture carried.
    const partial = (events: SseEvent[]): unknown => JSON.parse((dataOf(events, 'content_block_delta')[0]?.delta as { partial_json: string }).partial_json);
    expect(partial(ours)).toEqual(partial(captured));
  });

  // Clients dispatch on the data's type; an event line that disagrees would confuse some of them.
  it('names every event after the type in its data', () => {
    const events = parseSse(bodyText(renderAnthropic(toolReply({ kind: 'function', name: 'Bash', args: {} }, 'Running.'), view(), 'abc')));
    for (const e of events) expect(e.event).toBe((e.data as { type: string }).type);
  });

  it('sends SSE headers and status 200 when streaming', () => {
    const rendered = renderAnthropic(HELLO, view(), 'abc');
    expect(rendered.status).toBe(200);
    expect(rendered.headers['content-type']).toMatch(/^text\/event-stream/);
  });

  it('puts a text block before the tool block when a tool step also says something', () => {
    const events = parseSse(bodyText(renderAnthropic(toolReply({ kind: 'function', name: 'Bash', args: { command: 'ls' } }, 'Running.'), view(), 'abc')));
    expect(dataOf(events, 'content_block_start').map((d) => [d.index, (d.content_block as { type: string }).type])).toEqual([
      [0, 'text'],
      [1, 'tool_use'],
    ]);
    expect(dataOf(events, 'message_delta')[0]?.delta).toEqual({ stop_reason: 'tool_use', stop_sequence: null });
  });

  it('streams the text in pieces of chunkChars characters that join to the whole text', () => {
    const reply: Reply = { kind: 'text', text: 'abcdefghij', timing: timing({ chunkChars: 4 }) };
    const deltas = dataOf(parseSse(bodyText(renderAnthropic(reply, view(), 'abc'))), 'content_block_delta').map((d) => (d.delta as { text: string }).text);
    expect(deltas).toEqual(['abcd', 'efgh', 'ij']);
  });

  it('sends a JSON side answer as text', () => {
    const reply: Reply = { kind: 'json', value: { title: 'T' }, timing: timing() };
    const deltas = dataOf(parseSse(bodyText(renderAnthropic(reply, view(), 'abc'))), 'content_block_delta');
    expect(JSON.parse((deltas[0]?.delta as { text: string }).text)).toEqual({ title: 'T' });
  });

  it('answers without streaming as one message with text and tool_use blocks', () => {
    const rendered = renderAnthropic(toolReply({ kind: 'function', name: 'Bash', args: { command: 'ls' } }, 'Running.'), view({ stream: false, model: 'claude-x' }), 'abc');
    expect(rendered.status).toBe(200);
    expect(rendered.headers['content-type']).toBe('application/json');
    expect(JSON.parse(bodyText(rendered))).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [{ type: 'text', text: 'Running.' }, { type: 'tool_use', name: 'Bash', input: { command: 'ls' } }],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
    });
  });

  it('passes a freeform tool input as {input}', () => {
    const rendered = renderAnthropic(toolReply({ kind: 'custom', name: 'apply_patch', input: '*** Begin Patch' }), view({ stream: false }), 'abc');
    expect((JSON.parse(bodyText(rendered)) as { content: unknown[] }).content).toEqual([{ type: 'tool_use', id: 'toolu_abc', name: 'apply_patch', input: { input: '*** Begin Patch' } }]);
  });

  it.each<[number, number, string]>([
    [500, 500, 'api_error'],
    [429, 429, 'rate_limit_error'],
    [529, 529, 'overloaded_error'],
    [503, 503, 'overloaded_error'],
    [401, 401, 'authentication_error'],
    [400, 400, 'invalid_request_error'],
  ])('answers error %i with status %i and an Anthropic %s body, even when streaming', (scripted, status, type) => {
    const rendered = renderAnthropic(errorReply(scripted), view({ stream: true }), 'abc');
    expect(rendered.status).toBe(status);
    expect(rendered.headers['content-type']).toBe('application/json');
    expect(JSON.parse(bodyText(rendered))).toEqual({ type: 'error', error: { type, message: 'scripted failure' } });
  });
});

describe('renderOpenAiResponses', () => {
  it('streams text with the same events and fields as the captured stream', () => {
    const ours = parseSse(bodyText(renderOpenAiResponses(HELLO, view({ api: 'openai-responses', model: 'gpt-5.5' }), 'abc')));
    expect(shapes(ours)).toEqual(shapes(parseSse(fixture('openai-responses-text.sse'))));
  });

  it('streams a function call with the same events and fields as the captured stream', () => {
    const call: ToolCall = { kind: 'function', name: 'exec_command', args: { cmd: CAPTURED_COMMAND, workdir: '/home/dev/work-codex' } };
    const ours = parseSse(bodyText(renderOpenAiResponses(toolReply(call), view({ api: 'openai-responses', model: 'gpt-5.5' }), 'abc')));
    const captured = parseSse(fixture('openai-responses-function_call.sse'));
    expect(shapes(ours)).toEqual(shapes(captured));
    const args = (events: SseEvent[]): unknown => JSON.parse((dataOf(events, 'response.function_call_arguments.done')[0] as { arguments: string }).arguments);
    expect(args(ours)).toEqual(args(captured));
  });

  // Codex checks that sequence numbers count up from zero without gaps.
  it('numbers the events 0, 1, 2, … and names each after its type', () => {
    const events = parseSse(bodyText(renderOpenAiResponses(toolReply({ kind: 'function', name: 'exec_command', args: {} }, 'Running.'), view({ api: 'openai-responses' }), 'abc')));
    expect(events.map((e) => (e.data as { sequence_number: number }).sequence_number)).toEqual(events.map((_, i) => i));
    for (const e of events) expect(e.event).toBe((e.data as { type: string }).type);
  });

  it('puts text and a tool call in separate output items, indexed in order', () => {
    const events = parseSse(bodyText(renderOpenAiResponses(toolReply({ kind: 'function', name: 'exec_command', args: {} }, 'Running.'), view({ api: 'openai-responses' }), 'abc')));
    expect(dataOf(events, 'response.output_item.done').map((d) => [d.output_index, (d.item as { type: string }).type])).toEqual([
      [0, 'message'],
      [1, 'function_call'],
    ]);
    const completed = dataOf(events, 'response.completed')[0]?.response as { status: string; output: { type: string }[] };
    expect(completed.status).toBe('completed');
    expect(completed.output.map((o) => o.type)).toEqual(['message', 'function_call']);
  });

  // Codex's apply_patch is a freeform tool: its call is a custom_tool_call with plain-text input.
  it('streams a freeform tool call as a custom_tool_call with its input', () => {
    const events = parseSse(bodyText(renderOpenAiResponses(toolReply({ kind: 'custom', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n' }), view({ api: 'openai-responses' }), 'abc')));
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(dataOf(events, 'response.output_item.done')[0]?.item).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n', status: 'completed' });
  });

  // Codex 0.169 defers MCP tools behind tool_search, a tool it runs itself: the model's call is a
  // tool_search_call item (execution "client", its arguments an object), with no delta events.
  it('streams a tool search as a tool_search_call the client runs, its arguments an object', () => {
    const call: ToolCall = { kind: 'tool_search', name: 'tool_search', args: { query: 'switchboard ask', limit: 8 } };
    const events = parseSse(bodyText(renderOpenAiResponses(toolReply(call), view({ api: 'openai-responses' }), 'abc')));
    expect(events.map((e) => e.event)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.output_item.done', 'response.completed']);
    const item = { type: 'tool_search_call', id: 'tsc_abc', call_id: 'call_abc', execution: 'client', status: 'completed', arguments: { query: 'switchboard ask', limit: 8 } };
    expect(dataOf(events, 'response.output_item.done')[0]?.item).toEqual(item);
    expect((dataOf(events, 'response.completed')[0]?.response as { output: unknown[] }).output).toEqual([item]);
  });

  it("names a namespaced tool's namespace beside its name in the function call, and only then", () => {
    const render = (call: ToolCall): Record<string, unknown> | undefined => dataOf(parseSse(bodyText(renderOpenAiResponses(toolReply(call), view({ api: 'openai-responses' }), 'abc'))), 'response.output_item.done')[0]?.item as Record<string, unknown> | undefined;
    expect(render({ kind: 'function', name: 'ask', namespace: 'mcp__switchboard', args: { target: 'gemini' } })).toMatchObject({ type: 'function_call', name: 'ask', namespace: 'mcp__switchboard', arguments: '{"target":"gemini"}' });
    expect(render({ kind: 'function', name: 'exec_command', args: {} })).not.toHaveProperty('namespace');
  });

  it('answers without streaming as one completed response', () => {
    const rendered = renderOpenAiResponses(HELLO, view({ api: 'openai-responses', stream: false, model: 'gpt-5.5' }), 'abc');
    expect(rendered.headers['content-type']).toBe('application/json');
    // The same object the stream's response.completed event carries.
    const captured = dataOf(parseSse(fixture('openai-responses-text.sse')), 'response.completed')[0]?.response;
    const body = JSON.parse(bodyText(rendered)) as unknown;
    expect(shapeOf(body)).toEqual(shapeOf(captured));
    expect(body).toMatchObject({ object: 'response', status: 'completed', model: 'gpt-5.5', output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hello from fake model' }] }] });
  });

  it.each<[number, number, string]>([
    [500, 500, 'server_error'],
    [429, 429, 'rate_limit_exceeded'],
    [529, 503, 'server_error'],
    [503, 503, 'server_error'],
    [401, 401, 'invalid_api_key'],
    [400, 400, 'invalid_request_error'],
  ])('answers error %i with status %i and an OpenAI %s body', (scripted, status, type) => {
    const rendered = renderOpenAiResponses(errorReply(scripted), view({ api: 'openai-responses' }), 'abc');
    expect(rendered.status).toBe(status);
    expect(rendered.headers['content-type']).toBe('application/json');
    expect(JSON.parse(bodyText(rendered))).toEqual({ error: { message: 'scripted failure', type, code: type, param: null } });
  });
});

describe('renderOpenAiChat', () => {
  it('streams text with the same chunks and fields as the captured stream', () => {
    const ours = parseSse(bodyText(renderOpenAiChat(HELLO, view({ api: 'openai-chat', model: 'fake-model' }), 'abc', true)));
    expect(shapes(ours)).toEqual(shapes(parseSse(fixture('openai-chat-text.sse'))));
  });

  it('streams a tool call with the same chunks and fields as the captured stream', () => {
    const call: ToolCall = { kind: 'function', name: 'bash', args: { command: CAPTURED_COMMAND, description: 'Write a file via shell' } };
    const ours = parseSse(bodyText(renderOpenAiChat(toolReply(call), view({ api: 'openai-chat' }), 'abc', true)));
    const captured = parseSse(fixture('openai-chat-tool_calls.sse'));
    expect(shapes(ours)).toEqual(shapes(captured));
    type Chunk = { choices: { delta: { tool_calls?: { function: { arguments: string } }[] }; finish_reason: string | null }[] };
    const args = (events: SseEvent[]): unknown => JSON.parse((events[2]?.data as Chunk).choices[0]?.delta.tool_calls?.[0]?.function.arguments ?? '');
    expect(args(ours)).toEqual(args(captured));
    expect((ours[3]?.data as Chunk).choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('has no event lines and ends with [DONE]', () => {
    const events = parseSse(bodyText(renderOpenAiChat(HELLO, view({ api: 'openai-chat' }), 'abc', false)));
    expect(events.every((e) => e.event === undefined)).toBe(true);
    expect(events.at(-1)?.data).toBe('[DONE]');
  });

  // OpenCode asks for usage with stream_options.include_usage; without it there is no usage chunk.
  it('adds the usage chunk only when asked', () => {
    const withUsage = parseSse(bodyText(renderOpenAiChat(HELLO, view({ api: 'openai-chat' }), 'abc', true)));
    const without = parseSse(bodyText(renderOpenAiChat(HELLO, view({ api: 'openai-chat' }), 'abc', false)));
    expect(without).toHaveLength(withUsage.length - 1);
    const hasUsage = (events: SseEvent[]): boolean => events.some((e) => typeof e.data === 'object' && e.data !== null && 'usage' in e.data);
    expect(hasUsage(withUsage)).toBe(true);
    expect(hasUsage(without)).toBe(false);
  });

  it('answers without streaming as one chat.completion', () => {
    const rendered = renderOpenAiChat(toolReply({ kind: 'function', name: 'bash', args: { command: 'ls' } }), view({ api: 'openai-chat', stream: false, model: 'fake-model' }), 'abc', false);
    expect(rendered.headers['content-type']).toBe('application/json');
    const body = JSON.parse(bodyText(rendered)) as { choices: { message: { content: unknown; tool_calls: { function: { name: string; arguments: string } }[] }; finish_reason: string }[] };
    expect(body).toMatchObject({ object: 'chat.completion', model: 'fake-model', usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) } });
    const choice = body.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    // A tool call with nothing to say has null content, as the API sends it.
    expect(choice?.message.content).toBeNull();
    expect(choice?.message.tool_calls[0]?.function.name).toBe('bash');
    expect(JSON.parse(choice?.message.tool_calls[0]?.function.arguments ?? '')).toEqual({ command: 'ls' });
  });

  it('answers text without streaming with finish_reason stop and no tool_calls', () => {
    const body = JSON.parse(bodyText(renderOpenAiChat(HELLO, view({ api: 'openai-chat', stream: false }), 'abc', false))) as { choices: { message: Record<string, unknown>; finish_reason: string }[] };
    expect(body.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: 'Hello from fake model' }, finish_reason: 'stop' });
  });

  it.each<[number, number, string]>([
    [500, 500, 'server_error'],
    [429, 429, 'rate_limit_exceeded'],
    [529, 503, 'server_error'],
  ])('answers error %i with status %i and an OpenAI %s body', (scripted, status, type) => {
    const rendered = renderOpenAiChat(errorReply(scripted), view({ api: 'openai-chat' }), 'abc', true);
    expect(rendered.status).toBe(status);
    expect(JSON.parse(bodyText(rendered))).toEqual({ error: { message: 'scripted failure', type, code: type, param: null } });
  });
});

describe('renderGemini', () => {
  it('streams text with the same chunks and fields as the captured stream', () => {
    const ours = parseSse(bodyText(renderGemini(HELLO, view({ api: 'gemini', model: 'gemini-x' }), 'abc')));
    expect(shapes(ours)).toEqual(shapes(parseSse(fixture('gemini-text.sse'))));
  });

  it('streams a function call with the same chunk and fields as the captured stream', () => {
    const call: ToolCall = { kind: 'function', name: 'run_shell_command', args: { command: CAPTURED_COMMAND, description: 'Write a file via shell' } };
    const ours = parseSse(bodyText(renderGemini(toolReply(call), view({ api: 'gemini' }), 'abc')));
    const captured = parseSse(fixture('gemini-functionCall.sse'));
    expect(shapes(ours)).toEqual(shapes(captured));
    expect(ours[0]?.data).toMatchObject({ candidates: [{ content: { parts: [{ functionCall: { name: 'run_shell_command', args: call.args } }] }, finishReason: 'STOP' }] });
  });

  // Gemini's SSE separates events with CRLF pairs, as the capture shows.
  it('frames events as "data: …" followed by CRLF CRLF, like the capture', () => {
    const text = bodyText(renderGemini(HELLO, view({ api: 'gemini' }), 'abc'));
    const frame = /^data: [^\r\n]+\r\n\r\n$/;
    expect(fixture('gemini-text.sse').split(/(?<=\r\n\r\n)/).every((f) => frame.test(f))).toBe(true);
    expect(text.split(/(?<=\r\n\r\n)/).every((f) => frame.test(f))).toBe(true);
  });

  it('marks only the last chunk with finishReason and usage', () => {
    type Chunk = { candidates: { finishReason?: string }[]; usageMetadata?: unknown };
    const events = parseSse(bodyText(renderGemini(HELLO, view({ api: 'gemini' }), 'abc'))).map((e) => e.data as Chunk);
    expect(events.map((c) => c.candidates[0]?.finishReason)).toEqual([undefined, undefined, undefined, 'STOP']);
    expect(events.map((c) => c.usageMetadata !== undefined)).toEqual([false, false, false, true]);
  });

  it('sends text before a function call in the same stream', () => {
    const events = parseSse(bodyText(renderGemini(toolReply({ kind: 'function', name: 'run_shell_command', args: {} }, 'Running.'), view({ api: 'gemini' }), 'abc')));
    type Chunk = { candidates: { content: { parts: Record<string, unknown>[] } }[] };
    expect(events.map((e) => Object.keys((e.data as Chunk).candidates[0]?.content.parts[0] ?? {}))).toEqual([['text'], ['functionCall']]);
  });

  it('still sends one final chunk for an empty text', () => {
    const events = parseSse(bodyText(renderGemini({ kind: 'text', text: '', timing: timing() }, view({ api: 'gemini' }), 'abc')));
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({ candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP' }] });
  });

  it('answers without streaming as one response with every part', () => {
    const rendered = renderGemini(toolReply({ kind: 'function', name: 'write_file', args: { file_path: '/f' } }, 'Writing.'), view({ api: 'gemini', stream: false, model: 'gemini-2.5-flash' }), 'abc');
    expect(rendered.headers['content-type']).toBe('application/json');
    expect(JSON.parse(bodyText(rendered))).toMatchObject({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Writing.' }, { functionCall: { name: 'write_file', args: { file_path: '/f' } } }] }, finishReason: 'STOP' }],
      modelVersion: 'gemini-2.5-flash',
      usageMetadata: { promptTokenCount: expect.any(Number), candidatesTokenCount: expect.any(Number), totalTokenCount: expect.any(Number) },
    });
  });

  // The model router parses the text as JSON.
  it('sends a JSON side answer as JSON text', () => {
    const rendered = renderGemini({ kind: 'json', value: { complexity_reasoning: 'scripted', complexity_score: 1 }, timing: timing() }, view({ api: 'gemini', stream: false }), 'abc');
    const text = (JSON.parse(bodyText(rendered)) as { candidates: { content: { parts: { text: string }[] } }[] }).candidates[0]?.content.parts[0]?.text;
    expect(JSON.parse(text ?? '')).toEqual({ complexity_reasoning: 'scripted', complexity_score: 1 });
  });

  it.each<[number, number, string]>([
    [500, 500, 'INTERNAL'],
    [429, 429, 'RESOURCE_EXHAUSTED'],
    [529, 503, 'UNAVAILABLE'],
    [503, 503, 'UNAVAILABLE'],
    [401, 401, 'UNAUTHENTICATED'],
    [400, 400, 'INVALID_ARGUMENT'],
  ])('answers error %i with status %i and a Google %s body', (scripted, status, code) => {
    const rendered = renderGemini(errorReply(scripted), view({ api: 'gemini' }), 'abc');
    expect(rendered.status).toBe(status);
    expect(rendered.headers['content-type']).toBe('application/json');
    expect(JSON.parse(bodyText(rendered))).toEqual({ error: { code: status, message: 'scripted failure', status: code } });
  });
});

describe('chunking and pacing, on every API', () => {
  const renderers: [string, (reply: Reply, v?: Partial<ConversationView>) => Rendered][] = [
    ['anthropic', (r, v) => renderAnthropic(r, view(v), 'abc')],
    ['openai-responses', (r, v) => renderOpenAiResponses(r, view({ api: 'openai-responses', ...v }), 'abc')],
    ['openai-chat', (r, v) => renderOpenAiChat(r, view({ api: 'openai-chat', ...v }), 'abc', true)],
    ['gemini', (r, v) => renderGemini(r, view({ api: 'gemini', ...v }), 'abc')],
  ];

  it.each(renderers)('%s: puts the scripted pause between text pieces, never before the first or after the last', (_api, render) => {
    const rendered = render({ kind: 'text', text: 'abcdefghij', timing: timing({ chunkChars: 3, chunkDelayMs: 25 }) });
    const pauses = rendered.body.map((p, i) => (typeof p === 'string' ? -1 : i)).filter((i) => i >= 0);
    // Four pieces (abc, def, ghi, j), so three pauses, each between two strings.
    expect(pauses).toHaveLength(3);
    for (const i of pauses) {
      expect(rendered.body[i]).toEqual({ pauseMs: 25 });
      expect(typeof rendered.body[i - 1]).toBe('string');
      expect(typeof rendered.body[i + 1]).toBe('string');
    }
  });

  it.each(renderers)('%s: has no pauses when no pause is scripted', (_api, render) => {
    expect(render({ kind: 'text', text: 'abcdefghij', timing: timing({ chunkChars: 1 }) }).body.every((p) => typeof p === 'string')).toBe(true);
  });

  // Splitting inside a surrogate pair would send lone halves, which JSON.stringify escapes as \udXXX.
  it.each(renderers)('%s: splits text by characters, never inside an emoji', (_api, render) => {
    const body = bodyText(render({ kind: 'text', text: '😀é😀', timing: timing({ chunkChars: 1 }) }));
    expect(body).not.toMatch(/\\ud[89a-f]/i);
    expect(body).toContain('😀');
  });

  it.each<[string, string]>([
    ['anthropic', 'claude-scripted'],
    ['openai-responses', 'gpt-scripted'],
    ['openai-chat', 'scripted-model'],
    ['gemini', 'gemini-scripted'],
  ])('%s: names the model from the request, or %s when it names none', (api, fallback) => {
    const render = renderers.find(([name]) => name === api)?.[1];
    if (!render) throw new Error(`no renderer for ${api}`);
    const reply: Reply = { kind: 'text', text: 'x', timing: timing() };
    const modelOf = (v: Partial<ConversationView>): unknown => {
      const body = JSON.parse(bodyText(render(reply, { stream: false, ...v }))) as { model?: unknown; modelVersion?: unknown };
      return body.model ?? body.modelVersion;
    };
    expect(modelOf({})).toBe(fallback);
    expect(modelOf({ model: 'asked-for' })).toBe('asked-for');
  });
});
