import { describe, expect, it } from 'vitest';
import { OWNER_GRANT, TokenRegistry } from '../../api/index.js';
import { provenAtConnect, tokenInEveryRequest } from './authenticate.js';

describe("a transport's authenticate step", () => {
  const tokens = new TokenRegistry('owner-token');

  it("takes seed 000's token out of every request's params", async () => {
    const auth = tokenInEveryRequest(tokens.authenticate);
    expect(auth.atConnect).toBe(false);
    expect(await auth.authenticate({ token: 'owner-token', pane_id: 'p1' })).toEqual({ grant: OWNER_GRANT, params: { pane_id: 'p1' } });
    expect(await auth.authenticate({ pane_id: 'p1' })).toEqual({ refused: 'invalid token: params.token is missing' });
    expect(await auth.authenticate({ token: 'wrong' })).toEqual({ refused: 'invalid token' });
  });

  it("holds the owner's token to the pane the connecting process runs in", async () => {
    const cap = { owner: false, scopes: new Set(['read', 'ask'] as const), paneId: 'p9' };
    const auth = tokenInEveryRequest(tokens.authenticate, () => Promise.resolve(cap));
    const credentials = await auth.authenticate({ token: 'owner-token' });
    expect(credentials).toEqual({ grant: { owner: false, scopes: new Set(['read', 'ask']), paneId: 'p9' }, params: {} });
  });

  it('gives every request the grant proven when the connection opened', () => {
    const auth = provenAtConnect();
    expect(auth.atConnect).toBe(true);
    const params = { pane_id: 'p1' };
    expect(auth.authenticate(params)).toEqual({ grant: OWNER_GRANT, params });
    expect(auth.authenticate({ pane_id: 'p1', token: 'anything' })).toEqual({ grant: OWNER_GRANT, params: { pane_id: 'p1' } });
  });
});
