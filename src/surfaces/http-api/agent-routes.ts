/**
 * Seed 004's agent endpoints: `POST /api/v2/agent/run`, `GET /api/v2/agent/stream?run_id=…` (SSE,
 * resumable with Last-Event-ID), `POST /api/v2/agent/cancel`, `POST /api/v2/agent/interrupt` (the
 * turn only: the conversation stays for a follow-up), `GET /api/v2/agent/backends`, and
 * the ledger's view, `GET /api/v2/agent/runs` and `GET /api/v2/agent/runs/{id}`. Lists are the run
 * service's pages, bounded by count and by bytes, each saying where the next one starts
 * (`next_before`, `next_after`; null at the end), and written item by item (surfaces/http/answer.ts).
 * Each route calls the JSON-RPC method it names through an OperationsPort (the same params check,
 * scope and handler as JSON-RPC); only the SSE stream follows the run service itself.
 */
import { SwitchboardError } from '../../core/errors.js';
import { runIdSchema } from '../../protocol/methods/bridge.js';
import { operationCallerOf, readJson, queryOf, sendJson, validate, type ApiContext, type Router } from './router.js';
import { cancelRequestSchema, emptyQuerySchema, runQuerySchema, runRequestSchema, runsQuerySchema, streamQuerySchema } from './schemas.js';
import { openSse } from './sse.js';
import { IdempotencyKeys, idempotencyKeyOf, requestFingerprint } from './idempotency.js';
import { callerOf, renderWire, type OperationsPort, type RunOperation, type RunsPort, type RunView } from '../../api/index.js';

export const API_PREFIX = '/api/v2';
const MAX_EVENTS_PAGE = 10_000;
/** The most runs one page of the list holds (run_list's own bound). */
const MAX_RUNS_PAGE = 1_000;

/** A run as the API answers it: with where to follow it. */
function withStreamUrl(run: RunView): RunView & { stream_url: string } {
  return { ...run, stream_url: `${API_PREFIX}/agent/stream?run_id=${encodeURIComponent(run.id)}` };
}

/**
 * The SSE event name of a run event: its type, except the run's `error`, which EventSource would
 * hand to `onerror` (its handler for a failed connection) instead of to a listener.
 */
function sseEventName(type: string): string {
  return type === 'error' ? RUN_ERROR_EVENT : type;
}
/** The SSE name of a run's `error` event (its data still says `type: "error"`). */
const RUN_ERROR_EVENT = 'run_error';
/** Sent once, before the stream closes, when reading the recorded events failed. */
const STREAM_FAILED_EVENT = 'stream_failed';

/** Where a reader resumes: the Last-Event-ID header (what EventSource sends on reconnect), else the query's. */
function resumeAfter(ctx: ApiContext, fromQuery: string | undefined): number {
  const header = ctx.req.headers['last-event-id'];
  const raw = typeof header === 'string' ? header.trim() : fromQuery;
  if (raw === undefined || raw === '') return 0;
  if (!/^\d{1,15}$/.test(raw)) throw new SwitchboardError('INVALID_PARAMS', `Last-Event-ID must be an event number, not ${JSON.stringify(raw.slice(0, 40))}`);
  return Number(raw);
}

/** The run methods the HTTP API calls (`ops`), and the run service it follows runs on (`runs`, for SSE). */
export interface RunRoutesPorts {
  ops: OperationsPort<RunOperation>;
  runs: Pick<RunsPort, 'subscribe' | 'negotiate' | 'backendNames'>;
}

export function addAgentRoutes(router: Router, { ops, runs }: RunRoutesPorts, keys = new IdempotencyKeys()): void {
  router.add('POST', `${API_PREFIX}/agent/run`, 'run_submit', async (ctx) => {
    const body = validate(runRequestSchema, await readJson(ctx.req), 'run request');
    const caller = operationCallerOf(ctx);
    const key = idempotencyKeyOf(ctx.req);
    const submit = async (): Promise<string> => (await ops.call('run_submit', body, caller)).run.id;
    // A request repeated with its Idempotency-Key gets the run the first one started.
    const started = key === undefined ? { runId: await submit(), repeated: false } : await keys.runFor(callerOf(ctx.grant), key, requestFingerprint({ endpoint: 'agent/run', body }), submit);
    if (started.repeated) ctx.res.setHeader('Idempotent-Replayed', 'true');
    await sendJson(ctx.res, 202, withStreamUrl((await ops.call('run_get', { run_id: started.runId }, caller)).run));
  });

  router.add('GET', `${API_PREFIX}/agent/stream`, 'run_subscribe', async (ctx) => {
    const query = validate(streamQuerySchema, queryOf(ctx.url), 'stream query');
    const after = resumeAfter(ctx, query.last_event_id);
    // Before the stream opens, so that an unknown run is a 404 in the error shape, not an empty stream.
    const { run } = await ops.call('run_get', { run_id: query.run_id }, operationCallerOf(ctx));
    const version = query.schema_version === undefined ? run.schema_version : runs.negotiate(query.schema_version);
    // A reader at or past the end of a run that is over (an EventSource reconnecting after `done`)
    // has nothing to wait for: 204 is the one answer after which EventSource does not reconnect.
    if (run.ended_at !== null && after >= run.last_seq) {
      ctx.res.writeHead(204, { 'Cache-Control': 'no-store', 'X-Switchboard-Schema-Version': version });
      ctx.res.end();
      return;
    }
    const sse = openSse(ctx.res, { 'X-Switchboard-Schema-Version': version });
    const subscription = await runs.subscribe(query.run_id, after, (event) => sse.send({ id: event.seq, event: sseEventName(event.type), data: JSON.stringify(renderWire(event, version)) }), {
      onEnd: () => sse.close(),
      onError: (err) => {
        sse.send({ event: STREAM_FAILED_EVENT, data: JSON.stringify({ error: { code: 'INTERNAL_ERROR', message: err.message } }) });
        sse.close();
      },
    });
    sse.onClose(() => subscription.dispose());
  });

  router.add('POST', `${API_PREFIX}/agent/cancel`, 'run_cancel', async (ctx) => {
    const body = validate(cancelRequestSchema, await readJson(ctx.req), 'cancel request');
    await sendJson(ctx.res, 200, withStreamUrl((await ops.call('run_cancel', body, operationCallerOf(ctx))).run));
  });

  router.add('POST', `${API_PREFIX}/agent/interrupt`, 'run_interrupt', async (ctx) => {
    const body = validate(cancelRequestSchema, await readJson(ctx.req), 'interrupt request');
    await sendJson(ctx.res, 200, withStreamUrl((await ops.call('run_interrupt', body, operationCallerOf(ctx))).run));
  });

  router.add('GET', `${API_PREFIX}/agent/backends`, 'run_backends', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'backends query');
    await sendJson(ctx.res, 200, await ops.call('run_backends', {}, operationCallerOf(ctx)));
  });

  router.add('GET', `${API_PREFIX}/agent/nodes`, 'run_nodes', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'nodes query');
    await sendJson(ctx.res, 200, await ops.call('run_nodes', {}, operationCallerOf(ctx)));
  });

  router.add('GET', `${API_PREFIX}/agent/runs`, 'run_list', async (ctx) => {
    const q = validate(runsQuerySchema, queryOf(ctx.url), 'runs query');
    const page = await ops.call('run_list', { status: q.status, backend: q.backend, limit: q.limit === undefined ? undefined : Math.max(1, Math.min(Number(q.limit), MAX_RUNS_PAGE)), before: q.before === undefined ? undefined : Number(q.before) }, operationCallerOf(ctx));
    await sendJson(ctx.res, 200, { runs: page.runs.map(withStreamUrl), next_before: page.next_before });
  });

  router.add('GET', `${API_PREFIX}/agent/runs/:id`, 'run_events', async (ctx) => {
    const q = validate(runQuerySchema, queryOf(ctx.url), 'run query');
    const caller = operationCallerOf(ctx);
    const runId = ctx.params.id ?? '';
    // A path that cannot be a run's id names no run: 404, as an unknown id is.
    if (!runIdSchema.safeParse(runId).success) throw new SwitchboardError('RUN_NOT_FOUND', `no run ${runId.slice(0, 80)}`, { run_id: runId.slice(0, 80) });
    if (q.events !== 'true') {
      await sendJson(ctx.res, 200, { run: withStreamUrl((await ops.call('run_get', { run_id: runId }, caller)).run) });
      return;
    }
    const page = await ops.call('run_events', { run_id: runId, after: q.after === undefined ? 0 : Number(q.after), limit: Math.max(1, Math.min(Number(q.limit ?? MAX_EVENTS_PAGE), MAX_EVENTS_PAGE)), schema_version: q.schema_version }, caller);
    await sendJson(ctx.res, 200, { ...page, run: withStreamUrl(page.run) });
  });
}
