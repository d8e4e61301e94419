import type { Api, ConversationView } from './conversation.js';
import type { Reply } from './planner.js';
import type { ToolCall } from './tools.js';

/** A response as a status, headers and body pieces, with pauses between pieces where scripted. */
export interface Rendered {
  status: number;
  headers: Record<string, string>;
  body: (string | { pauseMs: number })[];
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' };
const JSON_HEADERS = { 'content-type': 'application/json' };

function chunks(text: string, size: number): string[] {
  if (text === '') return [];
  const out: string[] = [];
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/** Text pieces interleaved with the scripted pause. */
function paced<T>(pieces: T[], pauseMs: number, render: (piece: T) => string): Rendered['body'] {
  const out: Rendered['body'] = [];
  pieces.forEach((piece, i) => {
    if (i > 0 && pauseMs > 0) out.push({ pauseMs });
    out.push(render(piece));
  });
  return out;
}

const sse = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const dataOnly = (data: unknown, sep = '\n\n'): string => `data: ${typeof data === 'string' ? data : JSON.stringify(data)}${sep}`;
const usageTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

/** A call's arguments as an object (a freeform tool's text under `input`). */
function argsOf(call: ToolCall): Record<string, unknown> {
  return call.kind === 'custom' ? { input: call.input } : call.args;
}

function argsJson(call: ToolCall): string {
  return JSON.stringify(argsOf(call));
}

// ---------------------------------------------------------------- Anthropic Messages

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'overloaded_error',
  529: 'overloaded_error',
};

function anthropicError(status: number, message: string): Rendered {
  return { status, headers: JSON_HEADERS, body: [JSON.stringify({ type: 'error', error: { type: ANTHROPIC_ERROR_TYPES[status] ?? 'api_error', message } })] };
}

export function renderAnthropic(reply: Reply, view: ConversationView, id: string): Rendered {
  if (reply.kind === 'error') return anthropicError(reply.status, reply.message);
  const text = reply.kind === 'json' ? JSON.stringify(reply.value) : reply.text;
  const call = reply.kind === 'tool' ? reply.call : undefined;
  const model = view.model ?? 'claude-scripted';
  const stopReason = call ? 'tool_use' : 'end_turn';
  const toolId = `toolu_${id}`;
  if (!view.stream) {
    const content: unknown[] = [];
    if (text) content.push({ type: 'text', text });
    if (call) content.push({ type: 'tool_use', id: toolId, name: call.name, input: argsOf(call) });
    const message = { id: `msg_${id}`, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage: { input_tokens: usageTokens(view.text), output_tokens: usageTokens(text ?? '') } };
    return { status: 200, headers: JSON_HEADERS, body: [JSON.stringify(message)] };
  }
  const body: Rendered['body'] = [
    sse('message_start', {
      type: 'message_start',
      message: { id: `msg_${id}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usageTokens(view.text), cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } },
    }),
    sse('ping', { type: 'ping' }),
  ];
  let index = 0;
  if (text) {
    body.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
    body.push(...paced(chunks(text, reply.timing.chunkChars), reply.timing.chunkDelayMs, (piece) => sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } })));
    body.push(sse('content_block_stop', { type: 'content_block_stop', index }));
    index += 1;
  }
  if (call) {
    body.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: toolId, name: call.name, input: {} } }));
    body.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: argsJson(call) } }));
    body.push(sse('content_block_stop', { type: 'content_block_stop', index }));
  }
  body.push(sse('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usageTokens(text ?? '') } }));
  body.push(sse('message_stop', { type: 'message_stop' }));
  return { status: 200, headers: SSE_HEADERS, body };
}

// ---------------------------------------------------------------- OpenAI Responses

function openaiError(status: number, message: string): Rendered {
  const type = status === 429 ? 'rate_limit_exceeded' : status === 401 ? 'invalid_api_key' : status === 400 ? 'invalid_request_error' : 'server_error';
  return { status, headers: JSON_HEADERS, body: [JSON.stringify({ error: { message, type, code: type, param: null } })] };
}

/**
 * A call as a Responses API output item: a function call (with its namespace when the tool is in
 * one), a freeform tool's call, or a tool search the client runs itself (`execution: client`, its
 * arguments an object).
 */
function responsesCallItem(call: ToolCall, id: string): Record<string, unknown> & { id: string } {
  switch (call.kind) {
    case 'function':
      return { type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, name: call.name, ...(call.namespace !== undefined ? { namespace: call.namespace } : {}), arguments: JSON.stringify(call.args), status: 'completed' };
    case 'custom':
      return { type: 'custom_tool_call', id: `ctc_${id}`, call_id: `call_${id}`, name: call.name, input: call.input, status: 'completed' };
    case 'tool_search':
      return { type: 'tool_search_call', id: `tsc_${id}`, call_id: `call_${id}`, execution: 'client', status: 'completed', arguments: call.args };
  }
}

export function renderOpenAiResponses(reply: Reply, view: ConversationView, id: string): Rendered {
  if (reply.kind === 'error') return openaiError(reply.status === 529 ? 503 : reply.status, reply.message);
  const text = reply.kind === 'json' ? JSON.stringify(reply.value) : reply.text;
  const call = reply.kind === 'tool' ? reply.call : undefined;
  const created = Math.floor(Date.now() / 1000);
  const responseId = `resp_${id}`;
  const model = view.model ?? 'gpt-scripted';
  const items: Record<string, unknown>[] = [];
  const messageItem = text ? { type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] } : undefined;
  if (messageItem) items.push(messageItem);
  const callItem = call ? responsesCallItem(call, id) : undefined;
  if (callItem) items.push(callItem);
  const usage = { input_tokens: usageTokens(view.text), input_tokens_details: { cached_tokens: 0 }, output_tokens: usageTokens(text ?? ''), output_tokens_details: { reasoning_tokens: 0 }, total_tokens: usageTokens(view.text) + usageTokens(text ?? '') };
  const response = (status: string, output: unknown[]): Record<string, unknown> => ({ id: responseId, object: 'response', created_at: created, model, status, output, ...(status === 'completed' ? { usage } : {}) });
  if (!view.stream) return { status: 200, headers: JSON_HEADERS, body: [JSON.stringify(response('completed', items))] };

  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>): string => sse(type, { type, sequence_number: seq++, ...data });
  const body: Rendered['body'] = [ev('response.created', { response: response('in_progress', []) }), ev('response.in_progress', { response: response('in_progress', []) })];
  let outputIndex = 0;
  if (messageItem && text) {
    const itemId = messageItem.id;
    body.push(ev('response.output_item.added', { output_index: outputIndex, item: { ...messageItem, status: 'in_progress', content: [] } }));
    body.push(ev('response.content_part.added', { item_id: itemId, output_index: outputIndex, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }));
    body.push(...paced(chunks(text, reply.timing.chunkChars), reply.timing.chunkDelayMs, (piece) => ev('response.output_text.delta', { item_id: itemId, output_index: outputIndex, content_index: 0, delta: piece })));
    body.push(ev('response.output_text.done', { item_id: itemId, output_index: outputIndex, content_index: 0, text }));
    body.push(ev('response.content_part.done', { item_id: itemId, output_index: outputIndex, content_index: 0, part: { type: 'output_text', text, annotations: [] } }));
    body.push(ev('response.output_item.done', { output_index: outputIndex, item: messageItem }));
    outputIndex += 1;
  }
  if (callItem && call) {
    const itemId = callItem.id;
    if (call.kind === 'function') {
      const args = JSON.stringify(call.args);
      body.push(ev('response.output_item.added', { output_index: outputIndex, item: { ...callItem, arguments: '', status: 'in_progress' } }));
      body.push(ev('response.function_call_arguments.delta', { item_id: itemId, output_index: outputIndex, delta: args }));
      body.push(ev('response.function_call_arguments.done', { item_id: itemId, output_index: outputIndex, arguments: args }));
    } else if (call.kind === 'tool_search') {
      // Its arguments are an object, not a string, and have no delta events: the item carries them.
      body.push(ev('response.output_item.added', { output_index: outputIndex, item: { ...callItem, status: 'in_progress' } }));
    } else {
      body.push(ev('response.output_item.added', { output_index: outputIndex, item: { ...callItem, input: '', status: 'in_progress' } }));
      body.push(ev('response.custom_tool_call_input.delta', { item_id: itemId, output_index: outputIndex, delta: call.input }));
      body.push(ev('response.custom_tool_call_input.done', { item_id: itemId, output_index: outputIndex, input: call.input }));
    }
    body.push(ev('response.output_item.done', { output_index: outputIndex, item: callItem }));
  }
  body.push(ev('response.completed', { response: response('completed', items) }));
  return { status: 200, headers: SSE_HEADERS, body };
}

// ---------------------------------------------------------------- OpenAI Chat Completions

export function renderOpenAiChat(reply: Reply, view: ConversationView, id: string, includeUsage: boolean): Rendered {
  if (reply.kind === 'error') return openaiError(reply.status === 529 ? 503 : reply.status, reply.message);
  const text = reply.kind === 'json' ? JSON.stringify(reply.value) : reply.text;
  const call = reply.kind === 'tool' ? reply.call : undefined;
  const created = Math.floor(Date.now() / 1000);
  const chatId = `chatcmpl-${id}`;
  const model = view.model ?? 'scripted-model';
  const finish = call ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: usageTokens(view.text), completion_tokens: usageTokens(text ?? ''), total_tokens: usageTokens(view.text) + usageTokens(text ?? '') };
  const toolCall = call ? { id: `call_${id}`, type: 'function', function: { name: call.name, arguments: argsJson(call) } } : undefined;
  if (!view.stream) {
    const message = { role: 'assistant', content: text ?? null, ...(toolCall ? { tool_calls: [toolCall] } : {}) };
    return { status: 200, headers: JSON_HEADERS, body: [JSON.stringify({ id: chatId, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], usage })] };
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null): string =>
    dataOnly({ id: chatId, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason }] });
  const body: Rendered['body'] = [chunk({ role: 'assistant', content: '' }, null)];
  if (text) body.push(...paced(chunks(text, reply.timing.chunkChars), reply.timing.chunkDelayMs, (piece) => chunk({ content: piece }, null)));
  if (toolCall) {
    body.push(chunk({ tool_calls: [{ index: 0, id: toolCall.id, type: 'function', function: { name: toolCall.function.name, arguments: '' } }] }, null));
    body.push(chunk({ tool_calls: [{ index: 0, function: { arguments: toolCall.function.arguments } }] }, null));
  }
  body.push(chunk({}, finish));
  if (includeUsage) body.push(dataOnly({ id: chatId, object: 'chat.completion.chunk', created, model, choices: [], usage }));
  body.push(dataOnly('[DONE]'));
  return { status: 200, headers: SSE_HEADERS, body };
}

// ---------------------------------------------------------------- Gemini

const GEMINI_STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 529: 'UNAVAILABLE' };

function geminiError(status: number, message: string): Rendered {
  return { status, headers: JSON_HEADERS, body: [JSON.stringify({ error: { code: status, message, status: GEMINI_STATUS[status] ?? 'INTERNAL' } })] };
}

export function renderGemini(reply: Reply, view: ConversationView, id: string): Rendered {
  if (reply.kind === 'error') return geminiError(reply.status === 529 ? 503 : reply.status, reply.message);
  const text = reply.kind === 'json' ? JSON.stringify(reply.value) : reply.text;
  const call = reply.kind === 'tool' ? reply.call : undefined;
  const modelVersion = view.model ?? 'gemini-scripted';
  const usageMetadata = { promptTokenCount: usageTokens(view.text), candidatesTokenCount: usageTokens(text ?? ''), totalTokenCount: usageTokens(view.text) + usageTokens(text ?? '') };
  const functionPart = call ? { functionCall: { name: call.name, args: argsOf(call) } } : undefined;
  const candidate = (parts: unknown[], last: boolean): Record<string, unknown> => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
    modelVersion,
    responseId: id,
    ...(last ? { usageMetadata } : {}),
  });
  if (!view.stream) {
    const parts = [...(text ? [{ text }] : []), ...(functionPart ? [functionPart] : [])];
    return { status: 200, headers: JSON_HEADERS, body: [JSON.stringify(candidate(parts, true))] };
  }
  // Gemini's SSE separates events with CRLF pairs.
  const pieces: unknown[][] = chunks(text ?? '', reply.timing.chunkChars).map((piece) => [{ text: piece }]);
  if (functionPart) pieces.push([functionPart]);
  if (pieces.length === 0) pieces.push([{ text: '' }]);
  const body = paced(pieces.map((parts, i) => ({ parts, last: i === pieces.length - 1 })), reply.timing.chunkDelayMs, ({ parts, last }) => dataOnly(candidate(parts, last), '\r\n\r\n'));
  return { status: 200, headers: { ...SSE_HEADERS }, body };
}

// ---------------------------------------------------------------- any API

/**
 * An error in the error shape of `api`, for requests the server rejects before planning (a body
 * that is not a JSON object); the CLIs parse these shapes to show the user what went wrong.
 */
export function renderError(api: Api, status: number, message: string): Rendered {
  switch (api) {
    case 'anthropic':
      return anthropicError(status, message);
    case 'openai-responses':
    case 'openai-chat':
      return openaiError(status, message);
    case 'gemini':
      return geminiError(status, message);
  }
}
