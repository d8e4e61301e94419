import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../core/errors.js';
import { generateToken, tokenMatches } from '../core/secrets.js';
import { OWNER_GRANT } from './authorize.js';
import { TokenRegistry } from './tokens.js';

describe("the daemon's tokens", () => {
  it("resolves the owner's token to every scope, a pane's to its own, anything else to nothing", () => {
    const owner = generateToken();
    const tokens = new TokenRegistry(owner);
    const mine = tokens.issue('p1', ['read', 'ask']);
    expect(tokens.authenticate(owner)).toBe(OWNER_GRANT);
    expect(tokens.authenticate(mine)).toEqual({ owner: false, scopes: new Set(['read', 'ask']), paneId: 'p1' });
    expect(tokens.authenticate(generateToken())).toBeUndefined();
    expect(tokens.authenticate(42)).toBeUndefined();
    expect(tokens.authenticate(undefined)).toBeUndefined();
  });

  it("forgets a pane's tokens when the pane goes", () => {
    const tokens = new TokenRegistry(generateToken());
    const t = tokens.issue('p1', ['read']);
    const other = tokens.issue('p2', ['read']);
    tokens.revokePane('p1');
    expect(tokens.resolve(t)).toBeUndefined();
    expect(tokens.resolve(other)?.paneId).toBe('p2');
  });

  it('caps how many scoped tokens live at once', () => {
    const tokens = new TokenRegistry(generateToken());
    let refused: unknown;
    try {
      for (let i = 0; i < 5000; i++) tokens.issue(`p${i}`, ['read']);
    } catch (err) {
      refused = err;
    }
    expect(isSwitchboardError(refused, 'LIMIT_EXCEEDED')).toBe(true);
  });

  it('compares tokens whatever their length', () => {
    const token = generateToken();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenMatches(token, token)).toBe(true);
    expect(tokenMatches(token, `${token}x`)).toBe(false);
    expect(tokenMatches(token, '')).toBe(false);
    expect(tokenMatches(token, null)).toBe(false);
  });
});
