/**
 * Where a transport's requests prove who sends them, so the dispatcher is handed a grant and never
 * a token. Seed 000's JSON-RPC (TCP, the local socket) carries the token in every request's
 * params; the dashboard's WebSocket proved who it is at the upgrade (session cookie and page key),
 * so its requests carry none.
 */
import { OWNER_GRANT, type Authenticate, type Grant } from '../../api/index.js';

/** What a request's credentials come to: the caller's grant and the params without them, or why it is refused (INVALID_TOKEN). */
export type RequestCredentials = { grant: Grant; params: Record<string, unknown> } | { refused: string };

/** How one connection's requests are authenticated. */
export interface RequestAuthentication {
  /** True when the connection proved who it is when it opened: no deadline, no strangers' budget. */
  readonly atConnect: boolean;
  /** The credentials of one request (its params, an object). */
  authenticate(params: Record<string, unknown>): RequestCredentials;
}

/** Seed 000: `params.token` on every request, checked by `authenticate` (constant time). */
export function tokenInEveryRequest(authenticate: Authenticate): RequestAuthentication {
  return {
    atConnect: false,
    authenticate(params) {
      const { token, ...rest } = params;
      if (token === undefined) return { refused: 'invalid token: params.token is missing' };
      const grant = authenticate(token);
      return grant ? { grant, params: rest } : { refused: 'invalid token' };
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
