import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { TokenRegistry } from '../../api/index.js';
import { generateToken } from '../../core/secrets.js';
import { allowedHosts, cookieValue, DashboardAccess, hostAllowed, KEY_HEADER, KEY_PROTOCOL_PREFIX, LOGIN_CODE_TTL_MS, originAllowed, SESSION_COOKIE } from './access.js';

const request = (headers: Record<string, string>): IncomingMessage => ({ headers }) as unknown as IncomingMessage;

describe("who may use the dashboard", () => {
  const owner = generateToken();
  const tokens = new TokenRegistry(owner);

  it('trades a login code once, before it expires, for a session and its page key', () => {
    const access = new DashboardAccess(tokens.authenticate);
    const now = Date.now();
    const code = access.newLoginCode(now);
    expect(access.redeem(null)).toBeUndefined();
    const login = access.redeem(code, now + 1);
    expect(login?.session).toMatch(/^[\w-]{40,}$/);
    expect(access.redeem(code, now + 2)).toBeUndefined();
    const late = access.newLoginCode(now);
    expect(access.redeem(late, now + LOGIN_CODE_TTL_MS + 1)).toBeUndefined();
  });

  it('lets a browser in with its session cookie, and its page key where one is needed', () => {
    const access = new DashboardAccess(tokens.authenticate);
    const login = access.redeem(access.newLoginCode());
    if (!login) throw new Error('no login');
    const cookie = `${SESSION_COOKIE}=${login.session}`;
    expect(access.allowed(request({ cookie }), false)).toBe(true);
    expect(access.allowed(request({ cookie }), true)).toBe(false);
    expect(access.allowed(request({ cookie, [KEY_HEADER]: login.key }), true)).toBe(true);
    expect(access.allowed(request({ cookie, 'sec-websocket-protocol': `switchboard, ${KEY_PROTOCOL_PREFIX}${login.key}` }), true)).toBe(true);
    expect(access.allowed(request({ cookie: `${SESSION_COOKIE}=forged`, [KEY_HEADER]: login.key }), true)).toBe(false);
  });

  it("takes the owner's token as a Bearer header, and no pane's scoped token", () => {
    const access = new DashboardAccess(tokens.authenticate);
    const scoped = tokens.issue('p1', ['read', 'ask', 'admin']);
    expect(access.allowed(request({ authorization: `Bearer ${owner}` }), true)).toBe(true);
    expect(access.allowed(request({ authorization: `Bearer ${scoped}` }), true)).toBe(false);
    expect(access.allowed(request({ authorization: `Bearer ${generateToken()}` }), true)).toBe(false);
  });

  it('checks Host and Origin against this server on loopback', () => {
    const hosts = allowedHosts(8766);
    expect(hostAllowed(request({ host: '127.0.0.1:8766' }), hosts)).toBe(true);
    expect(hostAllowed(request({ host: 'evil.example:8766' }), hosts)).toBe(false);
    expect(originAllowed(request({}), hosts, false)).toBe(true);
    expect(originAllowed(request({}), hosts, true)).toBe(false);
    expect(originAllowed(request({ origin: 'http://localhost:8766' }), hosts, true)).toBe(true);
    expect(originAllowed(request({ origin: 'https://localhost:8766' }), hosts, true)).toBe(false);
    expect(cookieValue('a=1; sb_session=xyz', 'sb_session')).toBe('xyz');
  });
});
