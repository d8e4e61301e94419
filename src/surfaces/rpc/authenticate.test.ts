import { describe, expect, it } from 'vitest';
import { OWNER_GRANT, TokenRegistry } from '../../api/index.js';
import { provenAtConnect, tokenInEveryRequest } from './authenticate.js';

describe("a transport's authenticate step", () => {
  const tokens = new TokenRegistry('owner-token');

  it("takes seed 000's token out of every request's params", () => {
    const auth = tokenInEveryRequest(tokens.authenticate);
    expect(auth.atConnect).toBe(false);
    expect(auth.authenticate({ token: 'owner-token', pane_id: 'p1' })).toEqual({ grant: OWNER_GRANT, params: { pane_id: 'p1' } });
    expect(auth.authenticate({ pane_id: 'p1' })).toEqual({ refused: 'invalid token: params.token is missing' });
    expect(auth.authenticate({ token: 'wrong' })).toEqual({ refused: 'invalid token' });
  });

  it('gives every request the grant proven when the connection opened', () => {
    const auth = provenAtConnect();
    expect(auth.atConnect).toBe(true);
    const params = { pane_id: 'p1' };
    expect(auth.authenticate(params)).toEqual({ grant: OWNER_GRANT, params });
    expect(auth.authenticate({ pane_id: 'p1', token: 'anything' })).toEqual({ grant: OWNER_GRANT, params: { pane_id: 'p1' } });
  });
});
