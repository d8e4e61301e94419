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
 */
import type { ServerResponse } from 'node:http';
import { SwitchboardError } from '../../core/errors.js';
import { errorBody, readJson, sendJson, validate, type ApiContext, type Router } from './router.js';
import { chatRequestSchema, type ChatRequest } from './schemas.js';
import { openSse } from './sse.js';
import { API_PREFIX } from './agent-routes.js';
import { callerOf, type RunEvent, type RunsPort, type RunView } from '../../api/index.js';

const CWD_HEADER = 'x-switchboard-cwd';

function textOf(content: ChatRequest['messages'][number]['content']): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  return content.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
}

/** The prompt: the last user message, with what came before it as context. */
export function promptOf(messages: ChatRequest['messages']): string {
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

export function addChatProxyRoutes(router: Router, runs: RunsPort): void {
  const handler = async (ctx: ApiContext): Promise<void> => {
    const body = validate(chatRequestSchema, await readJson(ctx.req), 'chat completion request');
    const cwdHeader = ctx.req.headers[CWD_HEADER];
    const run = await runs.submit({ backend: body.model, prompt: promptOf(body.messages), caller: callerOf(ctx.grant), ...(typeof cwdHeader === 'string' ? { cwd: cwdHeader } : {}) });
    if (body.stream === true) await streamChat(ctx.res, runs, run, body.model);
    else await wholeChat(ctx.res, runs, run, body.model);
  };
  router.add('POST', `${API_PREFIX}/chat/proxy`, 'run_submit', handler);
  router.add('POST', `${API_PREFIX}/chat/proxy/chat/completions`, 'run_submit', handler);
  router.add('GET', `${API_PREFIX}/chat/proxy/models`, 'run_backends', async (ctx) => {
    const backends = await runs.backends();
    await sendJson(ctx.res, 200, { object: 'list', data: backends.map((b) => ({ id: b.name, object: 'model', created: 0, owned_by: 'switchboard' })) });
  });
}

const chatId = (run: RunView): string => `chatcmpl-${run.id}`;

/** Follows a run to its end, handing each event to `onEvent`. */
function follow(runs: RunsPort, runId: string, onEvent: (event: RunEvent) => void, until: Promise<void>): Promise<{ dispose(): void }> {
  return runs.subscribe(runId, 0, onEvent, {}).then((sub) => {
    void until.finally(() => sub.dispose());
    return sub;
  });
}

async function wholeChat(res: ServerResponse, runs: RunsPort, run: RunView, model: string): Promise<void> {
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
  // The client went away: the run goes on (it is recorded), the answer is no longer wanted.
  res.once('close', () => {
    sub.dispose();
    finished();
  });
  await end;
  if (res.destroyed) return;
  const outcome = typeof done?.data.outcome === 'string' ? done.data.outcome : 'ended';
  if (outcome !== 'completed') {
    const { status, body } = errorBody(new SwitchboardError('AGENT_ERROR', `the run ${outcome}: ${done?.compat.text ?? ''}`.trim(), { run_id: run.id, reason: done?.data.reason ?? null }));
    res.setHeader('X-Switchboard-Run-Id', run.id);
    await sendJson(res, status, body);
    return;
  }
  res.setHeader('X-Switchboard-Run-Id', run.id);
  await sendJson(res, 200, {
    id: chatId(run),
    object: 'chat.completion',
    created: Math.floor(run.created_at / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    switchboard: { run_id: run.id, status: outcome, reason: done?.data.reason ?? null },
  });
}

async function streamChat(res: ServerResponse, runs: RunsPort, run: RunView, model: string): Promise<void> {
  const sse = openSse(res, { 'X-Switchboard-Run-Id': run.id });
  const base = { id: chatId(run), object: 'chat.completion.chunk', created: Math.floor(run.created_at / 1000), model };
  const chunk = (delta: Record<string, unknown>, finish: string | null): string => JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  sse.send({ data: chunk({ role: 'assistant', content: '' }, null) });
  let finished: () => void = () => undefined;
  const end = new Promise<void>((resolve) => (finished = resolve));
  const sub = await follow(
    runs,
    run.id,
    (event) => {
      if (event.type === 'token') sse.send({ data: chunk({ content: event.compat.text }, null) });
      if (event.type !== 'done') return;
      if (event.data.outcome === 'completed') sse.send({ data: chunk({}, 'stop') });
      else sse.send({ data: JSON.stringify(errorBody(new SwitchboardError('AGENT_ERROR', `the run ${typeof event.data.outcome === 'string' ? event.data.outcome : 'ended'}: ${event.compat.text}`.trim(), { run_id: run.id, reason: event.data.reason ?? null })).body) });
      sse.send({ data: '[DONE]' });
      sse.close();
      finished();
    },
    end,
  );
  sse.onClose(() => {
    sub.dispose();
    finished();
  });
  await end;
}
