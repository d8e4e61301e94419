/**
 * Least privilege, checked on every call whatever surface it came by: the caller's grant (from its
 * token) against the scope the method needs (protocol/scopes.ts), and for `ask`, against the pane it
 * would type into. A refusal says which scope is missing and how the user grants it.
 */
import { SwitchboardError } from '../core/errors.js';
import { SCOPES, SCOPE_MEANINGS, AGENT_PANE_SCOPES, type Scope } from '../protocol/scopes.js';
import { METHOD_SCOPES } from '../protocol/method-scopes.js';
import { parseNodePaneId } from './remote-panes.js';
import type { Services } from './services.js';

/** What a caller may do: every scope (the owner), or some, for the programs of one pane. */
export interface Grant {
  /** The owner's token: everything, and panes it creates get the owner's token too. */
  readonly owner: boolean;
  readonly scopes: ReadonlySet<Scope>;
  /** The pane whose programs hold this token (a scoped token always belongs to one). */
  readonly paneId?: string;
  /** Who the caller is when no pane says it (a caller the daemon could not identify), for messages. */
  readonly who?: string;
}

export const OWNER_GRANT: Grant = { owner: true, scopes: new Set(SCOPES) };

function who(grant: Grant): string {
  return grant.paneId !== undefined ? `the token of pane ${grant.paneId}` : (grant.who ?? 'this token');
}

function forbidden(grant: Grant, method: string, scope: Scope, why?: string): SwitchboardError {
  const how = grant.paneId === undefined ? '' : `; the user grants it when starting the pane (create_pane {grants: ["${scope}"]}, or \`switchboard new --agent NAME --grant ${scope}\`)`;
  return new SwitchboardError(
    'FORBIDDEN',
    `forbidden: ${who(grant)} may not call ${method}${why ? ` (${why})` : ''}: it needs the scope '${scope}' (${SCOPE_MEANINGS[scope]})${how}`,
    { method, scope, ...(grant.paneId !== undefined ? { pane_id: grant.paneId } : {}) },
  );
}

function scopeOf(method: string): Scope {
  return Object.hasOwn(METHOD_SCOPES, method) ? METHOD_SCOPES[method as keyof typeof METHOD_SCOPES] : 'admin';
}

/**
 * Throws FORBIDDEN unless `grant` has the scope `method` needs, whatever it names: what a surface
 * checks before it knows the parameters (the HTTP API, per route). `authorize` checks this and the pane.
 */
export function requireScope(grant: Grant, method: string): void {
  if (grant.owner) return;
  const needed = scopeOf(method);
  // `send` types anything anywhere, so it covers what `ask` allows.
  if (grant.scopes.has(needed) || (needed === 'ask' && grant.scopes.has('send'))) return;
  throw forbidden(grant, method, needed);
}

/** Throws FORBIDDEN unless `grant` may call `method` with `params`. */
export function authorize(grant: Grant, method: string, params: unknown, ctx: Pick<Services, 'panes' | 'logs'>): void {
  requireScope(grant, method);
  // A program on a node runs there as the node's user, outside every cap a scoped token has here
  // (its pane's token, the sandbox, the caller's own processes): the owner's alone.
  if (method === 'create_pane' && (params as { node?: unknown }).node !== undefined && !grant.owner) {
    throw new SwitchboardError('FORBIDDEN', `forbidden: ${who(grant)} may not open a pane on node ${String((params as { node?: unknown }).node)}: only the owner's token may (a program there runs as the node's user, beyond what any scope allows)`, { method, ...(grant.paneId !== undefined ? { pane_id: grant.paneId } : {}) });
  }
  // send_prompt: anywhere with `send`; with `ask` only, to an agent pane that is not waiting on an
  // approval (a prompt's Enter would answer it).
  if (grant.owner || scopeOf(method) !== 'ask' || grant.scopes.has('send')) return;
  const paneId = (params as { pane_id?: unknown }).pane_id;
  // A node's pane: whether it runs an agent that is not waiting on an approval is its node's to know, not checked here.
  const onNode = typeof paneId === 'string' ? parseNodePaneId(paneId) : undefined;
  if (onNode) throw forbidden(grant, method, 'send', `pane ${String(paneId)} is on node ${onNode.node}, where this daemon cannot check that it is an agent not waiting on an approval`);
  const pane = typeof paneId === 'string' ? ctx.panes.find(paneId) : undefined;
  if (!pane) return; // the method itself answers PANE_NOT_FOUND
  if (pane.agent === undefined) throw forbidden(grant, method, 'send', `pane ${pane.id} is not an agent pane; asking is for agents`);
  if (ctx.logs.paneLog(pane.id)?.tracker?.state.state === 'waiting_approval') {
    throw forbidden(grant, method, 'approve', `pane ${pane.id} is waiting on an approval, which a prompt would answer`);
  }
}

/**
 * What a caller may do when its token allows `grant` but the process it runs in is held to `cap`
 * (a program of a scoped pane, caller-origin.ts): the scopes both allow, as that pane. The owner's
 * token found by a program in an agent pane gives it no more than the pane's own token.
 */
export function narrowGrant(grant: Grant, cap: Grant | undefined): Grant {
  if (cap === undefined || cap.owner) return grant;
  const allowed = grant.owner ? SCOPES : [...grant.scopes];
  return { owner: false, scopes: new Set(allowed.filter((s) => cap.scopes.has(s))), ...(cap.paneId !== undefined ? { paneId: cap.paneId } : {}), ...(cap.who !== undefined ? { who: cap.who } : {}) };
}

/**
 * The scopes of the token a new pane's programs get, or undefined for the owner's token: a shell
 * the owner opens gets the owner's; an agent pane gets read and ask and what was granted; a pane a
 * scoped caller starts never gets more than that caller has.
 */
export function scopesForNewPane(creator: Grant, agent: boolean, grants: readonly Scope[] = []): Scope[] | undefined {
  const wanted = agent ? [...new Set([...AGENT_PANE_SCOPES, ...grants])] : undefined;
  if (creator.owner) return wanted;
  return (wanted ?? [...creator.scopes]).filter((s) => creator.scopes.has(s));
}
