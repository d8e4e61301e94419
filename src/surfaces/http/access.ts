/**
 * Who may use the dashboard. The daemon's token never goes into a URL the browser keeps: the CLI
 * prints a one-time login code, which the server trades for an HttpOnly, SameSite=Strict session
 * cookie. Scripts may send the daemon's token as a Bearer header instead. Every request's Host
 * must name this server on loopback (DNS rebinding), and every WebSocket upgrade and every
 * state-changing request must come from this server's own Origin (cross-site WebSocket hijacking).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { tokenMatches } from '../rpc/auth.js';

export const SESSION_COOKIE = 'sb_session';
/** A login code is good once, for this long. */
export const LOGIN_CODE_TTL_MS = 10 * 60_000;
/** Sessions end with the daemon; this caps how many browsers hold one at once. */
const MAX_SESSIONS = 64;

export class DashboardAccess {
  private readonly codes = new Map<string, number>();
  private readonly sessions = new Set<string>();

  constructor(private readonly token: string) {}

  /** A fresh one-time login code. */
  newLoginCode(now = Date.now()): string {
    for (const [code, expires] of this.codes) if (expires <= now) this.codes.delete(code);
    const code = randomBytes(24).toString('base64url');
    this.codes.set(code, now + LOGIN_CODE_TTL_MS);
    return code;
  }

  /** Trades a login code for a session id; undefined for an unknown, used or expired code. */
  redeem(code: string | null, now = Date.now()): string | undefined {
    if (code === null) return undefined;
    // Constant time over the codes held: compare against every one.
    let found: string | undefined;
    for (const [known, expires] of this.codes) if (tokenMatches(known, code) && expires > now) found = known;
    if (found === undefined) return undefined;
    this.codes.delete(found);
    const session = randomBytes(32).toString('base64url');
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.values().next().value as string);
    this.sessions.add(session);
    return session;
  }

  /** The request carries a live session cookie or the daemon's token as a Bearer header. */
  allowed(req: IncomingMessage): boolean {
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ') && tokenMatches(this.token, auth.slice('Bearer '.length))) return true;
    const presented = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (presented === undefined) return false;
    let ok = false;
    for (const session of this.sessions) if (tokenMatches(session, presented)) ok = true;
    return ok;
  }
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
