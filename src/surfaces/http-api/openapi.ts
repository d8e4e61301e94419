/**
 * The HTTP API's OpenAPI 3.1 document (`GET /api/v2/openapi.json`), generated from the zod schemas
 * that validate the requests (zod 4's JSON Schema output is draft 2020-12, which OpenAPI 3.1 uses).
 */
import { z } from 'zod';
import { switchboardVersion } from '../../core/version.js';
import { ASK_ID_SOURCE } from '../../contract/ask.js';
import {
  askCancelRequestSchema,
  askListQuerySchema,
  askListResponseSchema,
  askRequestSchema,
  askSchema,
  askTargetsResponseSchema,
  askWaitRequestSchema,
  backendsResponseSchema,
  nodesResponseSchema,
  cancelRequestSchema,
  chatRequestSchema,
  errorSchema,
  runEventSchema,
  runQuerySchema,
  runRequestSchema,
  runsQuerySchema,
  runViewSchema,
  streamQuerySchema,
  teamAnswerRequestSchema,
  teamBoardQuerySchema,
  teamEventsQuerySchema,
  teamEventsResponseSchema,
  teamBoardResponseSchema,
  teamControlRequestSchema,
  teamEndRequestSchema,
  teamListResponseSchema,
  teamMarkRequestSchema,
  teamMarkResponseSchema,
  teamReportResponseSchema,
  teamRunRequestSchema,
  teamSendRequestSchema,
  teamSendResponseSchema,
  teamStateResponseSchema,
} from './schemas.js';
import { API_PREFIX } from './agent-routes.js';

type Json = Record<string, unknown>;

function schema(s: z.ZodType): Json {
  const out = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Json;
  delete out.$schema;
  return out;
}

/** Query parameters from a strict object schema of strings. */
function queryParameters(s: z.ZodObject): Json[] {
  const json = schema(s) as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, p]) => ({ name, in: 'query', required: json.required?.includes(name) ?? false, schema: p }));
}

const errorResponse = { description: 'An error in the one shape every endpoint uses (the same stable codes as JSON-RPC).', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
const errors = (...statuses: number[]): Json => Object.fromEntries(statuses.map((s) => [String(s), errorResponse]));
const json = (ref: string, description: string): Json => ({ description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } });
const body = (ref: string): Json => ({ required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } });
const optionalBody = (ref: string): Json => ({ required: false, content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } });
const askIdParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: ASK_ID_SOURCE } };
const askEnded = json('Ask', 'The ask, ended: done (with its reply), failed, timed_out (error TIMEOUT) or cancelled.');
const askUnderWay = json('Ask', 'The ask, still under way (queued, typing, waiting): follow it with wait or get.');
const teamIdParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^team-[0-9a-f]{8}$' } };
const teamControl = (action: 'pause' | 'resume', summary: string): Json => ({
  post: { operationId: `team${action === 'pause' ? 'Pause' : 'Resume'}`, summary, parameters: [teamIdParameter], requestBody: optionalBody('TeamControlRequest'), responses: { '200': json('TeamState', 'The run and its state.'), ...errors(400, 401, 403, 404, 405, 409, 413) } },
});

export function openApiDocument(): Json {
  const common = errors(400, 401, 403, 404, 405, 413);
  const idempotencyKey = { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 }, description: "Names the request: repeated by the same caller (a retry), it gets the first request's run instead of starting another; used for a different request, 422. Kept a day, in memory." };
  return {
    openapi: '3.1.0',
    info: { title: 'Switchboard agent bridge', version: switchboardVersion(), description: 'Runs of agent CLIs as a service (seed 004): submit, stream (SSE, resumable with Last-Event-ID), cancel, backends, the run ledger, and an OpenAI Chat Completions proxy; asks between agents (seed 000), the JSON-RPC ask methods over HTTP; and team runs (seed 003), the JSON-RPC team_run methods over HTTP.' },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        RunRequest: schema(runRequestSchema),
        CancelRequest: schema(cancelRequestSchema),
        ChatCompletionRequest: schema(chatRequestSchema),
        Run: schema(runViewSchema),
        RunEvent: schema(runEventSchema),
        Backends: schema(backendsResponseSchema),
        Nodes: schema(nodesResponseSchema),
        AskRequest: schema(askRequestSchema),
        AskWaitRequest: schema(askWaitRequestSchema),
        AskCancelRequest: schema(askCancelRequestSchema),
        Ask: schema(askSchema),
        AskList: schema(askListResponseSchema),
        AskTargets: schema(askTargetsResponseSchema),
        TeamRunRequest: schema(teamRunRequestSchema),
        TeamBoard: schema(teamBoardResponseSchema),
        TeamList: schema(teamListResponseSchema),
        TeamControlRequest: schema(teamControlRequestSchema),
        TeamState: schema(teamStateResponseSchema),
        TeamEndRequest: schema(teamEndRequestSchema),
        TeamSendRequest: schema(teamSendRequestSchema),
        TeamSend: schema(teamSendResponseSchema),
        TeamAnswerRequest: schema(teamAnswerRequestSchema),
        TeamMarkRequest: schema(teamMarkRequestSchema),
        TeamMark: schema(teamMarkResponseSchema),
        TeamReport: schema(teamReportResponseSchema),
        TeamEvents: schema(teamEventsResponseSchema),
        Error: schema(errorSchema),
      },
    },
    paths: {
      [`${API_PREFIX}/agent/run`]: { post: { operationId: 'agentRun', summary: "Submit a run (429 LIMIT_EXCEEDED past the policy's queue caps: runs waiting per caller, bytes of prompt waiting)", parameters: [idempotencyKey], requestBody: body('RunRequest'), responses: { '202': json('Run', 'The run, queued or started; follow it at stream_url. A request repeated with its Idempotency-Key gets the first one\'s run (with `Idempotent-Replayed: true`).'), ...common, ...errors(422, 429) } } },
      [`${API_PREFIX}/agent/stream`]: {
        get: {
          operationId: 'agentStream',
          summary: "Follow a run's events (SSE): recorded ones, then live ones, ending after `done`",
          parameters: [...queryParameters(streamQuerySchema), { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string', pattern: '^\\d+$' }, description: 'Resume after this event: no gap, no duplicate.' }],
          responses: {
            '200': { description: "text/event-stream: `id` is the event number, `event` its type (the run's `error` as `run_error`, so that EventSource gives it to a listener, not to onerror; `stream_failed` if reading the recorded events failed), `data` the event (RunEvent). Closes after `done`.", content: { 'text/event-stream': { schema: { type: 'string' } } } },
            '204': { description: 'The run is over and the reader is at or past its `done`: nothing to send (EventSource stops reconnecting).' },
            ...common,
          },
        },
      },
      [`${API_PREFIX}/agent/cancel`]: { post: { operationId: 'agentCancel', summary: 'Cancel a run (its whole process tree); only the caller that made it, or the owner, may (403 FORBIDDEN)', requestBody: body('CancelRequest'), responses: { '200': json('Run', 'The run, ended.'), ...common } } },
      [`${API_PREFIX}/agent/interrupt`]: { post: { operationId: 'agentInterrupt', summary: "Interrupt a run's turn (JSON-RPC `run_interrupt`): the CLI stops and keeps its conversation for a follow-up (`parent`), where its driver can; else a cancel. Ends `cancelled`; only the caller that made it, or the owner, may (403 FORBIDDEN)", requestBody: body('CancelRequest'), responses: { '200': json('Run', 'The run, ended (or, on a cluster node, as it stands once the node was told).'), ...common } } },
      [`${API_PREFIX}/agent/backends`]: { get: { operationId: 'agentBackends', summary: 'Backends with their capabilities and health', responses: { '200': json('Backends', 'Every backend.'), ...common } } },
      [`${API_PREFIX}/agent/nodes`]: { get: { operationId: 'agentNodes', summary: "The cluster's live nodes where the daemon is a controller (JSON-RPC `run_nodes`)", responses: { '200': json('Nodes', 'Every live node; cluster false and none on a daemon with no cluster.'), ...common } } },
      [`${API_PREFIX}/agent/runs`]: {
        get: { operationId: 'agentRuns', summary: 'Runs in the ledger, newest first', parameters: queryParameters(runsQuerySchema), responses: { '200': { description: 'A page of runs: at most `limit` and about 4 MiB of JSON; each prompt is a preview (its first KiB, prompt_truncated, prompt_bytes), GET /agent/runs/{id} has it whole.', content: { 'application/json': { schema: { type: 'object', properties: { runs: { type: 'array', items: { $ref: '#/components/schemas/Run' } }, next_before: { type: ['integer', 'null'], description: 'The `before` of the next page, or null at the end.' } }, required: ['runs', 'next_before'] } } } }, ...common } },
      },
      [`${API_PREFIX}/agent/runs/{id}`]: {
        get: {
          operationId: 'agentRunGet',
          summary: 'One run, with its events from the ledger when asked',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }, ...queryParameters(runQuerySchema)],
          responses: { '200': { description: 'The run (and its events).', content: { 'application/json': { schema: { type: 'object', properties: { run: { $ref: '#/components/schemas/Run' }, schema_version: { type: 'string' }, events: { type: 'array', items: { $ref: '#/components/schemas/RunEvent' } }, next_after: { type: ['integer', 'null'], description: 'With events: the `after` of the next page (a page stops at `limit` or about 4 MiB), or null once it reached the last event recorded.' } }, required: ['run'] } } } }, ...common },
        },
      },
      [`${API_PREFIX}/chat/proxy`]: {
        post: {
          operationId: 'chatProxy',
          summary: 'OpenAI Chat Completions; `model` names a backend (also at /chat/proxy/chat/completions)',
          parameters: [
            idempotencyKey,
            { name: 'X-Switchboard-Cwd', in: 'header', required: false, schema: { type: 'string' }, description: "The folder the agent works in (an OpenAI request has no field for it); default: the bridge's default folder. Held to the policy's sandbox roots like any run's." },
          ],
          requestBody: body('ChatCompletionRequest'),
          responses: {
            '200': {
              description:
                'A chat.completion, or with stream: true a text/event-stream of chat.completion.chunk ending with [DONE] (a failure mid-stream is a data line with `error`). Headers: `X-Switchboard-Run-Id`, `X-Switchboard-Ignored` (request fields without effect), and `x-should-retry: false` on every answer once a run exists. A client that goes away before its answer cancels its run, unless it sent an Idempotency-Key (the run then goes on for its retry).',
              content: { 'application/json': { schema: { type: 'object' } }, 'text/event-stream': { schema: { type: 'string' } } },
            },
            ...common,
            ...errors(422, 429, 502),
          },
        },
      },
      [`${API_PREFIX}/asks`]: {
        post: { operationId: 'ask', summary: 'Ask the agent in another pane a question (JSON-RPC `ask`); waits for the reply unless wait is false', requestBody: body('AskRequest'), responses: { '200': askEnded, '202': askUnderWay, ...common, ...errors(409, 429) } },
        get: { operationId: 'askList', summary: 'Asks the daemon keeps, oldest first (JSON-RPC `ask_list`)', parameters: queryParameters(askListQuerySchema), responses: { '200': json('AskList', 'Asks.'), ...common } },
      },
      [`${API_PREFIX}/asks/targets`]: { get: { operationId: 'askTargets', summary: 'The agent panes an ask can name (JSON-RPC `ask_targets`)', responses: { '200': json('AskTargets', 'Targets.'), ...common } } },
      [`${API_PREFIX}/asks/{id}`]: { get: { operationId: 'askGet', summary: 'One ask as it stands (JSON-RPC `ask_get`); 404 ASK_NOT_FOUND for an id the daemon does not keep', parameters: [askIdParameter], responses: { '200': json('Ask', 'The ask now.'), ...common } } },
      [`${API_PREFIX}/asks/{id}/wait`]: {
        post: { operationId: 'askWait', summary: 'Wait for an ask to end (JSON-RPC `ask_wait`), at most timeout_ms when given', parameters: [askIdParameter], requestBody: optionalBody('AskWaitRequest'), responses: { '200': askEnded, '202': askUnderWay, ...common } },
      },
      [`${API_PREFIX}/asks/{id}/cancel`]: {
        post: { operationId: 'askCancel', summary: 'Cancel an ask (JSON-RPC `ask_cancel`): cancelled unless it had ended', parameters: [askIdParameter], requestBody: optionalBody('AskCancelRequest'), responses: { '200': json('Ask', 'The ask.'), ...common } },
      },
      [`${API_PREFIX}/teams`]: {
        post: { operationId: 'teamRun', summary: 'Start a team run from a preset and a goal (JSON-RPC `team_run_start`); its agents open in the background', requestBody: body('TeamRunRequest'), responses: { '201': json('TeamBoard', 'The board, starting.'), ...common, ...errors(429) } },
        get: { operationId: 'teamRuns', summary: 'The team runs kept, the newest first (JSON-RPC `team_run_list`)', responses: { '200': json('TeamList', 'Runs.'), ...common } },
      },
      [`${API_PREFIX}/teams/{id}`]: {
        get: { operationId: 'teamBoard', summary: "A team run's board (JSON-RPC `team_run_get`); with after_version, answered once it changed past it: a live board", parameters: [teamIdParameter, ...queryParameters(teamBoardQuerySchema)], responses: { '200': json('TeamBoard', 'The board.'), ...common } },
      },
      [`${API_PREFIX}/teams/{id}/pause`]: teamControl('pause', "Hold the planner's tool calls (JSON-RPC `team_run_pause`)"),
      [`${API_PREFIX}/teams/{id}/resume`]: teamControl('resume', "Let the planner's tool calls go on (JSON-RPC `team_run_resume`)"),
      [`${API_PREFIX}/teams/{id}/end`]: {
        post: { operationId: 'teamEnd', summary: 'End the run, keeping or closing its agents (JSON-RPC `team_run_end`)', parameters: [teamIdParameter], requestBody: body('TeamEndRequest'), responses: { '200': json('TeamState', 'The run and its state.'), ...common } },
      },
      [`${API_PREFIX}/teams/{id}/send`]: {
        post: { operationId: 'teamSend', summary: "A person's text to one worker or to all (JSON-RPC `team_run_send`); a risky one is held unless confirmed", parameters: [teamIdParameter], requestBody: body('TeamSendRequest'), responses: { '200': json('TeamSend', 'Where it went, or held with the judgement.'), ...common, ...errors(409) } },
      },
      [`${API_PREFIX}/teams/{id}/confirmations/{cid}`]: {
        post: {
          operationId: 'teamAnswer',
          summary: 'Let a text the risk gate holds through to its worker, or not (JSON-RPC `team_run_answer`); 409 when it is no longer held',
          parameters: [teamIdParameter, { name: 'cid', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: body('TeamAnswerRequest'),
          responses: { '200': { description: 'Answered.', content: { 'application/json': { schema: { type: 'object', properties: { answered: { const: true } }, required: ['answered'] } } } }, ...common, ...errors(409) },
        },
      },
      [`${API_PREFIX}/teams/{id}/workers/{wid}/mark`]: {
        post: { operationId: 'teamMark', summary: 'Mark a worker done, blocked or needing input (JSON-RPC `team_run_mark`)', parameters: [teamIdParameter, { name: 'wid', in: 'path', required: true, schema: { type: 'string' } }], requestBody: body('TeamMarkRequest'), responses: { '200': json('TeamMark', 'The worker and its state.'), ...common } },
      },
      [`${API_PREFIX}/teams/{id}/report`]: {
        get: { operationId: 'teamReport', summary: "The run's report as markdown (JSON-RPC `team_run_report`)", parameters: [teamIdParameter], responses: { '200': json('TeamReport', 'The report.'), ...common } },
      },
      [`${API_PREFIX}/teams/{id}/workers/{wid}/restart`]: {
        post: {
          operationId: 'teamRestart',
          summary: 'Restart a stuck worker, or one whose CLI ended, within the preset\'s cap (JSON-RPC `team_run_restart`)',
          parameters: [teamIdParameter, { name: 'wid', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: optionalBody('TeamControlRequest'),
          responses: { '200': json('TeamMark', 'The worker and its state.'), ...common, ...errors(409, 429) },
        },
      },
      [`${API_PREFIX}/teams/{id}/calls/{cid}/resend`]: {
        post: {
          operationId: 'teamResend',
          summary: "Type a call's result into the planner again, once it is idle: one undelivered or unconfirmed (JSON-RPC `team_run_resend`)",
          parameters: [teamIdParameter, { name: 'cid', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: optionalBody('TeamControlRequest'),
          responses: { '200': { description: 'Queued.', content: { 'application/json': { schema: { type: 'object', properties: { call_id: { type: 'string' }, delivered: { const: 'pending' } }, required: ['call_id', 'delivered'] } } } }, ...common, ...errors(409) },
        },
      },
      [`${API_PREFIX}/teams/{id}/events`]: {
        get: { operationId: 'teamEvents', summary: "The run's record from the ledger, in order: every change, call, decision and held text (JSON-RPC `team_run_events`)", parameters: [teamIdParameter, ...queryParameters(teamEventsQuerySchema)], responses: { '200': json('TeamEvents', 'A page of the record.'), ...common } },
      },
      [`${API_PREFIX}/openapi.json`]: { get: { operationId: 'openapi', summary: 'This document', responses: { '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } } } } },
    },
  };
}
