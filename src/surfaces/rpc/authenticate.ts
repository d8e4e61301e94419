/**
 * Where a transport's requests prove who sends them, so the dispatcher is handed a grant and never
 * a token. Seed 000's JSON-RPC (TCP, the local socket) carries the token in every request's
 * params; the dashboard's WebSocket proved who it is at the upgrade (session cookie and page key),
 * so its requests carry none.
 */
import { narrowGrant, OWNER_GRANT, type Authenticate, type Grant } from '../../api/index.js';

/**
 * What a request's credentials come to: the caller's grant and the params without them, or why it
 * is refused (INVALID_TOKEN; LIMIT_EXCEEDED when the token is good but its grant has no
 * connection left).
 */
type RequestCredentials = { grant: Grant; params: Record<string, unknown> } | { refused: string; code?: 'LIMIT_EXCEEDED' };

/** How one connection's requests are authenticated. */
export interface RequestAuthentication {
  /** True when the connection proved who it is when it opened: no deadline, no strangers' budget. */
  readonly atConnect: boolean;
  /** The credentials of one request (its params, an object). */
  authenticate(params: Record<string, unknown>): RequestCredentials | Promise<RequestCredentials>;
}

/**
 * Seed 000: `params.token` on every request, checked by `authenticate` (constant time). With
 * `origin`, the most the connecting process may do (api/caller-origin.ts: a program of an agent
 * pane is held to that pane's grant whatever token it shows), asked once, at the connection's first
 * request with a token of ours (a stranger's requests never cost the daemon a look at /proc).
 */
export function tokenInEveryRequest(authenticate: Authenticate, origin?: () => Promise<Grant | undefined>): RequestAuthentication {
  let asked: Promise<Grant | undefined> | undefined;
  return {
    atConnect: false,
    async authenticate(params) {
      const { token, ...rest } = params;
      if (token === undefined) return { refused: 'invalid token: params.token is missing' };
      const grant = authenticate(token);
      if (!grant) return { refused: 'invalid token' };
      if (origin === undefined) return { grant, params: rest };
      asked ??= origin();
      return { grant: narrowGrant(grant, await asked), params: rest };
    },
  };
}

/**
 * The connection proved who it is when it opened (the dashboard's login is the owner's full
 * control): every request has `grant`. A `token` a page sends anyway is no credential here and is
 * dropped, as it always was.
 */
export function provenAtConnect(grant: Grant = OWNER_GRANT): RequestAuthentication {
  return {
    atConnect: true,
    authenticate(params) {
      if (!Object.hasOwn(params, 'token')) return { grant, params };
      const { token: _ignored, ...rest } = params;
      return { grant, params: rest };
    },
  };
}
