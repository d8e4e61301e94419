/**
 * Team runs over HTTP (issue 24): the JSON-RPC `team_run_*` methods as REST, called by name
 * through api/'s OperationsPort, so the operations, their validation and their errors are
 * JSON-RPC's. `POST /api/v2/teams` starts a run (201, the board), `GET /api/v2/teams` lists them,
 * `GET /api/v2/teams/{id}` is the board (a live one with `after_version`), and the run's actions
 * are POSTs under it: `pause`, `resume`, `end`, `send`, `confirmations/{cid}` (the risk gate's
 * answer), `workers/{wid}/mark`; `workers/{wid}/restart`, `calls/{cid}/resend` (a result typed into the planner again); `GET …/report` is the report,
 * `GET …/events` the run's record.
 */
import { teamParams, teamRunIdSchema } from '../../protocol/methods/teams.js';
import type { OperationsPort } from '../../api/index.js';
import { operationCallerOf, queryOf, readJson, readOptionalJson, sendJson, validate, type ApiContext, type Router } from './router.js';
import { emptyQuerySchema, teamAnswerRequestSchema, teamBoardQuerySchema, teamEventsQuerySchema, teamControlRequestSchema, teamEndRequestSchema, teamMarkRequestSchema, teamRunRequestSchema, teamSendRequestSchema } from './schemas.js';
import { API_PREFIX } from './agent-routes.js';

/** The team run methods these routes call. */
export type TeamRouteMethod = 'team_run_start' | 'team_run_list' | 'team_run_get' | 'team_run_pause' | 'team_run_resume' | 'team_run_end' | 'team_run_answer' | 'team_run_mark' | 'team_run_send' | 'team_run_report' | 'team_run_events' | 'team_run_resend' | 'team_run_restart';

const TEAMS = `${API_PREFIX}/teams`;

/** The run id in the path, checked as JSON-RPC checks `run_id` (a malformed one is 400; an unknown one 404 from the operation). */
function runIdOf(ctx: ApiContext): string {
  return validate(teamRunIdSchema, { run_id: ctx.params.id ?? '' }, 'team run id').run_id;
}

export function addTeamRoutes(router: Router, teams: OperationsPort<TeamRouteMethod>): void {
  router.add('POST', TEAMS, 'team_run_start', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'team run query');
    const body = validate(teamRunRequestSchema, await readJson(ctx.req), 'team run request');
    await sendJson(ctx.res, 201, await teams.call('team_run_start', body, operationCallerOf(ctx)));
  });

  router.add('GET', TEAMS, 'team_run_list', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'team runs query');
    await sendJson(ctx.res, 200, await teams.call('team_run_list', {}, operationCallerOf(ctx)));
  });

  router.add('GET', `${TEAMS}/:id`, 'team_run_get', async (ctx) => {
    const q = validate(teamBoardQuerySchema, queryOf(ctx.url), 'team board query');
    const params = validate(
      teamParams.team_run_get,
      { run_id: runIdOf(ctx), after_version: q.after_version === undefined ? undefined : Number(q.after_version), wait_ms: q.wait_ms === undefined ? undefined : Number(q.wait_ms) },
      'team board query',
    );
    await sendJson(ctx.res, 200, await teams.call('team_run_get', params, operationCallerOf(ctx)));
  });

  for (const action of ['pause', 'resume'] as const) {
    const method = action === 'pause' ? 'team_run_pause' : 'team_run_resume';
    router.add('POST', `${TEAMS}/:id/${action}`, method, async (ctx) => {
      validate(emptyQuerySchema, queryOf(ctx.url), `team ${action} query`);
      const runId = runIdOf(ctx);
      validate(teamControlRequestSchema, await readOptionalJson(ctx.req), `team ${action} request`);
      await sendJson(ctx.res, 200, await teams.call(method, { run_id: runId }, operationCallerOf(ctx)));
    });
  }

  router.add('POST', `${TEAMS}/:id/end`, 'team_run_end', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'team end query');
    const runId = runIdOf(ctx);
    const body = validate(teamEndRequestSchema, await readJson(ctx.req), 'team end request');
    await sendJson(ctx.res, 200, await teams.call('team_run_end', { run_id: runId, ...body }, operationCallerOf(ctx)));
  });

  router.add('POST', `${TEAMS}/:id/send`, 'team_run_send', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'team send query');
    const runId = runIdOf(ctx);
    const body = validate(teamSendRequestSchema, await readJson(ctx.req), 'team send request');
    await sendJson(ctx.res, 200, await teams.call('team_run_send', { run_id: runId, ...body }, operationCallerOf(ctx)));
  });

  router.add('POST', `${TEAMS}/:id/confirmations/:cid`, 'team_run_answer', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'team answer query');
    const runId = runIdOf(ctx);
    const body = validate(teamAnswerRequestSchema, await readJson(ctx.req), 'team answer request');
    await sendJson(ctx.res, 200, await teams.call('team_run_answer', { run_id: runId, confirmation_id: ctx.params.cid ?? '', ...body }, operationCallerOf(ctx)));
  });

  router.add('POST', `${TEAMS}/:id/workers/:wid/mark`, 'team_run_mark', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'team mark query');
    const runId = runIdOf(ctx);
    const body = validate(teamMarkRequestSchema, await readJson(ctx.req), 'team mark request');
    await sendJson(ctx.res, 200, await teams.call('team_run_mark', { run_id: runId, worker_id: ctx.params.wid ?? '', ...body }, operationCallerOf(ctx)));
  });

  router.add('GET', `${TEAMS}/:id/report`, 'team_run_report', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'team report query');
    await sendJson(ctx.res, 200, await teams.call('team_run_report', { run_id: runIdOf(ctx) }, operationCallerOf(ctx)));
  });

  router.add('POST', `${TEAMS}/:id/workers/:wid/restart`, 'team_run_restart', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'team restart query');
    const runId = runIdOf(ctx);
    validate(teamControlRequestSchema, await readOptionalJson(ctx.req), 'team restart request');
    await sendJson(ctx.res, 200, await teams.call('team_run_restart', { run_id: runId, worker_id: ctx.params.wid ?? '' }, operationCallerOf(ctx)));
  });

  router.add('POST', `${TEAMS}/:id/calls/:cid/resend`, 'team_run_resend', async (ctx) => {
    validate(emptyQuerySchema, queryOf(ctx.url), 'team resend query');
    const runId = runIdOf(ctx);
    validate(teamControlRequestSchema, await readOptionalJson(ctx.req), 'team resend request');
    await sendJson(ctx.res, 200, await teams.call('team_run_resend', { run_id: runId, call_id: ctx.params.cid ?? '' }, operationCallerOf(ctx)));
  });

  router.add('GET', `${TEAMS}/:id/events`, 'team_run_events', async (ctx) => {
    const q = validate(teamEventsQuerySchema, queryOf(ctx.url), 'team record query');
    const params = validate(teamParams.team_run_events, { run_id: runIdOf(ctx), after_seq: q.after_seq === undefined ? undefined : Number(q.after_seq), limit: q.limit === undefined ? undefined : Number(q.limit) }, 'team record query');
    await sendJson(ctx.res, 200, await teams.call('team_run_events', params, operationCallerOf(ctx)));
  });
}
