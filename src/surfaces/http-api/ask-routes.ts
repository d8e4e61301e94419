/**
 * Asks over HTTP (issue 14): the JSON-RPC ask methods as REST, called by name through api/'s OperationsPort, so the
 * operations, their validation (the same schemas) and their errors are JSON-RPC's.
 * `POST /api/v2/asks` (`ask`), `GET /api/v2/asks` (`ask_list`), `GET /api/v2/asks/targets`
 * (`ask_targets`), `GET /api/v2/asks/{id}` (`ask_get`), `POST /api/v2/asks/{id}/wait` (`ask_wait`),
 * `POST /api/v2/asks/{id}/cancel` (`ask_cancel`).
 *
 * The asker is nobody's pane unless the body says (`from_pane_id`) or the token is a pane's own:
 * then it asks as that pane and no other, as over JSON-RPC. An ask that ended, however it ended, is
 * 200 with its record (a timed-out one has status `timed_out` and error TIMEOUT, as JSON-RPC
 * reports it and the CLI turns into exit 2); one still under way is 202 (not waiting, or the
 * wait's own time limit came first).
 */
import type { ServerResponse } from 'node:http';
import { ASK_FINAL_WIRE_STATUSES, askParams } from '../../protocol/methods/asks.js';
import type { AskInfo } from '../../protocol/methods.js';
import type { OperationsPort } from '../../api/index.js';
import { operationCallerOf, queryOf, readJson, readOptionalJson, sendJson, validate, type ApiContext, type Router } from './router.js';
import { askCancelRequestSchema, askListQuerySchema, askRequestSchema, askWaitRequestSchema, emptyQuerySchema } from './schemas.js';
import { API_PREFIX } from './agent-routes.js';

const FINAL: ReadonlySet<string> = new Set(ASK_FINAL_WIRE_STATUSES);

/** 200 for an ask that ended, 202 for one still under way. */
async function sendAsk(res: ServerResponse, ask: AskInfo): Promise<void> {
  await sendJson(res, FINAL.has(ask.status) ? 200 : 202, ask);
}

/** The ask id in the path, checked as JSON-RPC checks `ask_id` (a malformed one is 400; an unknown one 404 from the operation). */
function askIdOf(ctx: ApiContext): string {
  return validate(askParams.ask_get, { ask_id: ctx.params.id ?? '' }, 'ask id').ask_id;
}

/** The ask methods these routes call. */
export type AskRouteMethod = 'ask' | 'ask_list' | 'ask_targets' | 'ask_get' | 'ask_wait' | 'ask_cancel';

export function addAskRoutes(router: Router, asks: OperationsPort<AskRouteMethod>): void {
  router.add('POST', `${API_PREFIX}/asks`, 'ask', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'ask query');
    const body = validate(askRequestSchema, await readJson(ctx.req), 'ask request');
    await sendAsk(ctx.res, await asks.call('ask', body, operationCallerOf(ctx)));
  });

  router.add('GET', `${API_PREFIX}/asks`, 'ask_list', async (ctx) => {
    const q = validate(askListQuerySchema, queryOf(ctx.url), 'ask list query');
    const params = validate(askParams.ask_list, { limit: q.limit === undefined ? undefined : Number(q.limit) }, 'ask list query');
    await sendJson(ctx.res, 200, await asks.call('ask_list', params, operationCallerOf(ctx)));
  });

  // Before `/asks/:id`: `targets` is not an ask id (ten hex digits), so the two never clash.
  router.add('GET', `${API_PREFIX}/asks/targets`, 'ask_targets', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'ask targets query');
    await sendJson(ctx.res, 200, await asks.call('ask_targets', {}, operationCallerOf(ctx)));
  });

  router.add('GET', `${API_PREFIX}/asks/:id`, 'ask_get', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'ask query');
    await sendJson(ctx.res, 200, await asks.call('ask_get', { ask_id: askIdOf(ctx) }, operationCallerOf(ctx)));
  });

  router.add('POST', `${API_PREFIX}/asks/:id/wait`, 'ask_wait', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'ask wait query');
    const askId = askIdOf(ctx);
    const body = validate(askWaitRequestSchema, await readOptionalJson(ctx.req), 'ask wait request');
    await sendAsk(ctx.res, await asks.call('ask_wait', { ask_id: askId, ...body }, operationCallerOf(ctx)));
  });

  router.add('POST', `${API_PREFIX}/asks/:id/cancel`, 'ask_cancel', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'ask cancel query');
    const askId = askIdOf(ctx);
    validate(askCancelRequestSchema, await readOptionalJson(ctx.req), 'ask cancel request');
    await sendJson(ctx.res, 200, await asks.call('ask_cancel', { ask_id: askId }, operationCallerOf(ctx)));
  });
}
