/**
 * Who may use the dashboard. The daemon's token never goes into a URL the browser keeps: the CLI
 * prints a one-time login code, which the server trades for two things: an HttpOnly,
 * SameSite=Strict session cookie, and a page key handed over in the redirect's fragment (never sent
 * to a server) that the page keeps in its origin's storage. Cookies are not kept apart by port, so
 * any other server on 127.0.0.1 would receive the cookie; it never sees the key, which every
 * WebSocket upgrade and export must present too (as a subprotocol `sb-key.<key>`, or a header;
 * never in a URL, which ends up in history, logs and Referer headers). Scripts may send the daemon's (owner's) token as a Bearer header instead; a pane's scoped token is not accepted. Every request's
 * Host must name this server on loopback (DNS rebinding), and every WebSocket upgrade must come from
 * this server's own Origin (cross-site WebSocket hijacking).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { tokenMatches } from '../../core/secrets.js';
import type { Authenticate } from '../../api/index.js';

export const SESSION_COOKIE = 'sb_session';
/** A login code is good once, for this long. */
export const LOGIN_CODE_TTL_MS = 10 * 60_000;
/** Sessions end with the daemon; this caps how many browsers hold one at once. */
const MAX_SESSIONS = 64;

/** The WebSocket subprotocol prefix that carries the page key. */
export const KEY_PROTOCOL_PREFIX = 'sb-key.';
export const KEY_HEADER = 'x-switchboard-key';

export interface DashboardLogin {
  /** The cookie's value. */
  session: string;
  /** The page key, for the page's own storage. */
  key: string;
}

export class DashboardAccess {
  private readonly codes = new Map<string, number>();
  /** Session cookie → page key. */
  private readonly sessions = new Map<string, string>();

  /** `authenticate`: the daemon's tokens; only the owner's opens the dashboard. */
  constructor(private readonly authenticate: Authenticate) {}

  /** A fresh one-time login code. */
  newLoginCode(now = Date.now()): string {
    for (const [code, expires] of this.codes) if (expires <= now) this.codes.delete(code);
    const code = randomBytes(24).toString('base64url');
    this.codes.set(code, now + LOGIN_CODE_TTL_MS);
    return code;
  }

  /** Trades a login code for a session and its page key; undefined for an unknown, used or expired code. */
  redeem(code: string | null, now = Date.now()): DashboardLogin | undefined {
    if (code === null) return undefined;
    // Constant time over the codes held: compare against every one.
    let found: string | undefined;
    for (const [known, expires] of this.codes) if (tokenMatches(known, code) && expires > now) found = known;
    if (found === undefined) return undefined;
    this.codes.delete(found);
    const login = { session: randomBytes(32).toString('base64url'), key: randomBytes(32).toString('base64url') };
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
    this.sessions.set(login.session, login.key);
    return login;
  }

  /**
   * The request carries the daemon's token as a Bearer header, or a live session cookie and (with
   * `needKey`: sockets, exports, the login check) that session's page key.
   */
  allowed(req: IncomingMessage, needKey: boolean): boolean {
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ') && this.authenticate(auth.slice('Bearer '.length))?.owner === true) return true;
    const presented = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (presented === undefined) return false;
    // Constant time over the sessions held: compare against every one.
    let key: string | undefined;
    for (const [session, sessionKey] of this.sessions) if (tokenMatches(session, presented)) key = sessionKey;
    if (key === undefined) return false;
    return !needKey || tokenMatches(key, presentedKey(req) ?? '');
  }
}

/** The page key a request presents: a WebSocket subprotocol or a header (headers only). */
function presentedKey(req: IncomingMessage): string | undefined {
  const protocols = req.headers['sec-websocket-protocol'];
  for (const p of (protocols ?? '').split(',')) if (p.trim().startsWith(KEY_PROTOCOL_PREFIX)) return p.trim().slice(KEY_PROTOCOL_PREFIX.length);
  const header = req.headers[KEY_HEADER];
  return typeof header === 'string' ? header : undefined;
}

/** The value of cookie `name` in a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The Host values that name this server: loopback names with its port. */
export function allowedHosts(port: number): Set<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
}

/** Host names this server (so a rebound DNS name is refused). */
export function hostAllowed(req: IncomingMessage, hosts: ReadonlySet<string>): boolean {
  return req.headers.host !== undefined && hosts.has(req.headers.host.toLowerCase());
}

/** Origin is this server's own; `required` refuses a request without one (WebSocket upgrades). */
export function originAllowed(req: IncomingMessage, hosts: ReadonlySet<string>, required: boolean): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return !required;
  if (!origin.startsWith('http://')) return false;
  return hosts.has(origin.slice('http://'.length).toLowerCase());
}
