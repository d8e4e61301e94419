import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../core/errors.js';
import { authorize, OWNER_GRANT, requireScope, scopesForNewPane, type Grant } from './authorize.js';
import type { Services } from './services.js';

/** The panes and logs authorize looks at: one agent pane (waiting or not), one shell. */
function world(agentState: string): Pick<Services, 'panes' | 'logs'> {
  const panes = new Map([
    ['pa', { id: 'pa', agent: { name: 'claude' } }],
    ['ps', { id: 'ps', agent: undefined }],
  ]);
  return {
    panes: { find: (id: string) => panes.get(id) },
    logs: { paneLog: (id: string) => (id === 'pa' ? { tracker: { state: { state: agentState } } } : undefined) },
  } as unknown as Pick<Services, 'panes' | 'logs'>;
}

const scoped = (...scopes: Grant['scopes'] extends ReadonlySet<infer S> ? S[] : never): Grant => ({ owner: false, scopes: new Set(scopes), paneId: 'pme' });

function refusal(grant: Grant, method: string, params: unknown, state = 'idle'): string | undefined {
  try {
    authorize(grant, method, params, world(state));
    return undefined;
  } catch (err) {
    if (!isSwitchboardError(err, 'FORBIDDEN')) throw err;
    return err.message;
  }
}

describe('least privilege', () => {
  it('checks the scope alone where the parameters are not known yet (the HTTP API, per route), as authorize does', () => {
    expect(() => requireScope(OWNER_GRANT, 'run_submit')).not.toThrow();
    expect(() => requireScope(scoped('read', 'ask'), 'ask')).not.toThrow();
    expect(() => requireScope(scoped('read', 'send'), 'ask_cancel')).not.toThrow();
    expect(() => requireScope(scoped('read', 'ask'), 'ask_list')).not.toThrow();
    expect(() => requireScope(scoped('read'), 'ask')).toThrow(/it needs the scope 'ask'/);
    expect(() => requireScope(scoped('read', 'ask'), 'run_submit')).toThrow(/it needs the scope 'create'/);
  });

  it('opens a pane on a node for the owner alone: a scoped token with create opens one here, never there', () => {
    const onNode = { argv: ['sh'], node: 'n1' };
    expect(refusal(OWNER_GRANT, 'create_pane', onNode)).toBeUndefined();
    expect(refusal(scoped('read', 'ask', 'create'), 'create_pane', { argv: ['sh'] })).toBeUndefined();
    expect(refusal(scoped('read', 'ask', 'create'), 'create_pane', onNode)).toMatch(/may not open a pane on node n1: only the owner's token may/);
    expect(refusal({ owner: false, scopes: new Set(['read', 'ask', 'send', 'create', 'approve', 'export', 'admin']) }, 'create_pane', onNode)).toMatch(/only the owner's token may/);
  });

  it('lets the owner call anything', () => {
    expect(refusal(OWNER_GRANT, 'shutdown', {})).toBeUndefined();
    expect(refusal(OWNER_GRANT, 'a_test_method', {})).toBeUndefined();
  });

  it("refuses a scoped token a method outside its scopes, naming the scope and how it is granted", () => {
    const message = refusal(scoped('read', 'ask'), 'kill', { pane_id: 'ps' });
    expect(message).toContain("it needs the scope 'kill'");
    expect(message).toContain('the token of pane pme');
    expect(message).toContain('--grant kill');
    expect(refusal(scoped('read', 'ask'), 'list', {})).toBeUndefined();
    // A method with no scope of its own (a test's) needs admin.
    expect(refusal(scoped('read', 'ask'), 'a_test_method', {})).toContain("'admin'");
  });

  it('lets ask prompt an agent pane, not a shell, and not one waiting on an approval', () => {
    expect(refusal(scoped('read', 'ask'), 'send_prompt', { pane_id: 'pa', text: 'hi' })).toBeUndefined();
    expect(refusal(scoped('read', 'ask'), 'send_prompt', { pane_id: 'ps', text: 'hi' })).toContain('not an agent pane');
    expect(refusal(scoped('read', 'ask'), 'send_prompt', { pane_id: 'pa', text: 'hi' }, 'waiting_approval')).toContain('waiting on an approval');
    expect(refusal(scoped('read', 'send'), 'send_prompt', { pane_id: 'ps', text: 'hi' })).toBeUndefined();
    // A node's pane: its agent and state are not known here, so `ask` alone is not enough; `send` is.
    expect(refusal(scoped('read', 'ask'), 'send_prompt', { pane_id: 'n1/pa', text: 'hi' })).toContain('on node n1');
    expect(refusal(scoped('read', 'send'), 'send_prompt', { pane_id: 'n1/pa', text: 'hi' })).toBeUndefined();
    // An unknown pane is the method's to report (PANE_NOT_FOUND).
    expect(refusal(scoped('read', 'ask'), 'send_prompt', { pane_id: 'nope', text: 'hi' })).toBeUndefined();
  });

  it("gives a new pane's programs no more than their creator has", () => {
    expect(scopesForNewPane(OWNER_GRANT, false)).toBeUndefined();
    expect(scopesForNewPane(OWNER_GRANT, true, ['send'])).toEqual(['read', 'ask', 'send']);
    expect(scopesForNewPane(scoped('read', 'ask', 'create'), true, ['kill'])).toEqual(['read', 'ask']);
    expect(scopesForNewPane(scoped('read', 'create'), false)).toEqual(['read', 'create']);
  });
});
