/**
 * `/api/v2/chat/proxy`: OpenAI Chat Completions in front of the run service, so that any OpenAI
 * client library can drive a coding agent. `model` names the backend; the conversation's last user
 * message is the prompt (earlier turns and system messages go before it as context); the answer is
 * the run's reply text, streamed as `chat.completion.chunk`s and `data: [DONE]`, or whole. The run
 * is an ordinary run: recorded in the ledger, under the same governance, its id in the answer
 * (`switchboard.run_id`, and the `X-Switchboard-Run-Id` header).
 *
 * OpenAI clients put their base URL before `/chat/completions`, so a client given
 * `…/api/v2/chat/proxy` as its base URL reaches `…/api/v2/chat/proxy/chat/completions`: both paths
 * answer, and `…/models` lists the backends as models.
 *
 * Safe to retry, as OpenAI clients do on their own: once a run has started, every answer says
 * `x-should-retry: false` (the `openai` package obeys it), since a second request would run the
 * agent again; a client that goes away before its answer cancels its run; and an `Idempotency-Key`
 * gives a repeated request the run of the first (idempotency.ts), followed from its start, and
 * keeps the run going when its client goes away, for the retry to pick up.
 */
import type { ServerResponse } from 'node:http';
import { SwitchboardError } from '../../core/errors.js';
import { errorBody, HttpError, operationCallerOf, readJson, sendJson, validate, type ApiContext, type Router } from './router.js';
import { IdempotencyKeys, idempotencyKeyOf, requestFingerprint } from './idempotency.js';
import { chatRequestSchema, type ChatRequest } from './schemas.js';
import { openSse } from './sse.js';
import { API_PREFIX } from './agent-routes.js';
import { callerOf, type RunEvent, type RunView } from '../../api/index.js';
import type { RunRoutesPorts } from './agent-routes.js';

const CWD_HEADER = 'x-switchboard-cwd';

function textOf(content: ChatRequest['messages'][number]['content']): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  return content.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
}

/** The prompt: the last user message, with what came before it as context. */
function promptOf(messages: ChatRequest['messages']): string {
  let last = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user') last = i;
  });
  if (last < 0) throw new SwitchboardError('INVALID_PARAMS', 'messages: there is no user message to answer');
  const ask = textOf(messages[last]?.content).trim();
  if (ask === '') throw new SwitchboardError('INVALID_PARAMS', `messages[${last}].content: the user message is empty`);
  const before = messages.slice(0, last).map((m) => ({ role: m.role, text: textOf(m.content).trim() })).filter((m) => m.text !== '');
  if (before.length === 0) return ask;
  return `${before.map((m) => `[${m.role}] ${m.text}`).join('\n\n')}\n\n[user] ${ask}`;
}

export function addChatProxyRoutes(router: Router, { ops, runs }: RunRoutesPorts, keys = new IdempotencyKeys()): void {
  const handler = async (ctx: ApiContext): Promise<void> => {
    const body = validate(chatRequestSchema, await readJson(ctx.req), 'chat completion request');
    const names = runs.backendNames();
    // OpenAI answers an unknown model 404 (the `openai` package's NotFoundError), before anything runs.
    if (!names.includes(body.model)) throw new HttpError(404, 'INVALID_PARAMS', `model ${JSON.stringify(body.model)} is not a backend here; there are ${names.join(', ')}`, { model: body.model });
    const cwdHeader = ctx.req.headers[CWD_HEADER];
    const cwd = typeof cwdHeader === 'string' ? cwdHeader : undefined;
    const caller = callerOf(ctx.grant);
    const asCaller = operationCallerOf(ctx);
    const prompt = promptOf(body.messages);
    const key = idempotencyKeyOf(ctx.req);
    // A chat completion cannot be followed up (the next request carries the whole conversation
    // again): its CLI ends with the run instead of waiting, idle, for a follow-up that never comes.
    const submit = async (): Promise<string> => (await ops.call('run_submit', { backend: body.model, prompt, keep_alive: false, ...(cwd !== undefined ? { cwd } : {}) }, asCaller)).run.id;
    const started = key === undefined ? { runId: await submit(), repeated: false } : await keys.runFor(caller, key, requestFingerprint({ endpoint: 'chat/proxy', model: body.model, prompt, cwd: cwd ?? null, stream: body.stream === true }), submit);
    const runId = started.runId;
    if (started.repeated) ctx.res.setHeader('Idempotent-Replayed', 'true');
    // From here a run exists: a second request would run the agent again.
    ctx.res.setHeader('x-should-retry', 'false');
    ctx.res.setHeader('X-Switchboard-Run-Id', runId);
    const ignored = IGNORED_FIELDS.filter((f) => body[f] !== undefined && body[f] !== null);
    if (ignored.length > 0) ctx.res.setHeader('X-Switchboard-Ignored', ignored.join(', '));
    const { run } = await ops.call('run_get', { run_id: runId }, asCaller);
    // Without a key, nobody will come back for the answer: the run is cancelled with its client.
    const abandon = key === undefined ? (): void => void ops.call('run_cancel', { run_id: runId }, asCaller).catch(() => undefined) : (): void => undefined;
    if (body.stream === true) await streamChat(ctx.res, runs, run, body.model, { usage: body.stream_options?.include_usage === true, abandon });
    else await wholeChat(ctx.res, runs, run, body.model, abandon);
  };
  router.add('POST', `${API_PREFIX}/chat/proxy`, 'run_submit', handler);
  router.add('POST', `${API_PREFIX}/chat/proxy/chat/completions`, 'run_submit', handler);
  router.add('GET', `${API_PREFIX}/chat/proxy/models`, 'run_backends', async (ctx) => {
    await sendJson(ctx.res, 200, { object: 'list', data: runs.backendNames().map((name) => ({ id: name, object: 'model', created: 0, owned_by: 'switchboard' })) });
  });
}

/** Request fields a coding agent has no use for: accepted, without effect, and named in `X-Switchboard-Ignored`. */
const IGNORED_FIELDS = ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'presence_penalty', 'frequency_penalty', 'stop', 'seed', 'logit_bias', 'logprobs', 'top_logprobs', 'response_format', 'tools', 'tool_choice', 'functions', 'function_call', 'parallel_tool_calls', 'reasoning_effort', 'verbosity', 'modalities', 'audio', 'prediction', 'service_tier', 'web_search_options'] as const;

const chatId = (run: RunView): string => `chatcmpl-${run.id}`;

/** Follows a run to its end, handing each event to `onEvent`. */
function follow(runs: RunRoutesPorts['runs'], runId: string, onEvent: (event: RunEvent) => void, until: Promise<void>): Promise<{ dispose(): void }> {
  return runs.subscribe(runId, 0, onEvent, {}).then((sub) => {
    void until.finally(() => sub.dispose());
    return sub;
  });
}

async function wholeChat(res: ServerResponse, runs: RunRoutesPorts['runs'], run: RunView, model: string, abandon: () => void): Promise<void> {
  let text = '';
  let done: RunEvent | undefined;
  let finished: () => void = () => undefined;
  const end = new Promise<void>((resolve) => (finished = resolve));
  const sub = await follow(
    runs,
    run.id,
    (event) => {
      if (event.type === 'token') text += event.compat.text;
      if (event.type === 'done') {
        done = event;
        finished();
      }
    },
    end,
  );
  res.once('close', () => {
    sub.dispose();
    // The client went away before its answer.
    if (!done) abandon();
    finished();
  });
  await end;
  if (res.destroyed) return;
  const outcome = typeof done?.data.outcome === 'string' ? done.data.outcome : 'ended';
  if (outcome !== 'completed') {
    const { status, body } = errorBody(runFailure(run, done));
    await sendJson(res, status, body);
    return;
  }
  await sendJson(res, 200, {
    id: chatId(run),
    object: 'chat.completion',
    created: Math.floor(run.created_at / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: NO_USAGE,
    switchboard: { run_id: run.id, status: outcome, reason: done?.data.reason ?? null },
  });
}

/** Agents' token counts are not collected: the usage OpenAI clients expect, all zero. */
const NO_USAGE = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

/** A run that did not complete, as the error a client sees: the policy's refusal is FORBIDDEN, anything else AGENT_ERROR. */
function runFailure(run: RunView, done: RunEvent | undefined): SwitchboardError {
  const outcome = typeof done?.data.outcome === 'string' ? done.data.outcome : 'ended';
  const reason = done?.data.reason ?? null;
  const message = `the run ${outcome}${typeof reason === 'string' ? ` (${reason})` : ''}: ${done?.compat.text ?? ''}`.trim();
  return new SwitchboardError(reason === 'policy' ? 'FORBIDDEN' : 'AGENT_ERROR', message, { run_id: run.id, outcome, reason });
}

async function streamChat(res: ServerResponse, runs: RunRoutesPorts['runs'], run: RunView, model: string, options: { usage: boolean; abandon: () => void }): Promise<void> {
  const sse = openSse(res);
  const base = { id: chatId(run), object: 'chat.completion.chunk', created: Math.floor(run.created_at / 1000), model };
  const chunk = (delta: Record<string, unknown>, finish: string | null): string => JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(options.usage ? { usage: null } : {}) });
  sse.send({ data: chunk({ role: 'assistant', content: '' }, null) });
  let ended = false;
  let finished: () => void = () => undefined;
  const end = new Promise<void>((resolve) => (finished = resolve));
  const sub = await follow(
    runs,
    run.id,
    (event) => {
      if (event.type === 'token') sse.send({ data: chunk({ content: event.compat.text }, null) });
      if (event.type !== 'done') return;
      ended = true;
      if (event.data.outcome === 'completed') sse.send({ data: chunk({}, 'stop') });
      else sse.send({ data: JSON.stringify(errorBody(runFailure(run, event)).body) });
      // stream_options.include_usage: one last chunk with no choices and the usage.
      if (options.usage) sse.send({ data: JSON.stringify({ ...base, choices: [], usage: NO_USAGE }) });
      sse.send({ data: '[DONE]' });
      sse.close();
      finished();
    },
    end,
  );
  sse.onClose(() => {
    sub.dispose();
    if (!ended) options.abandon();
    finished();
  });
  await end;
}
