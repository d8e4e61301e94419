import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../core/errors.js';
import { RpcMcpBackend, type RpcCall } from './rpc-backend.js';

/** A daemon with one agent pane (p1, idle), one plain pane that exited (p2), and nothing else. */
const call = ((method: string, params: { pane_id?: string }) => {
  if (method === 'ask_targets') return Promise.resolve({ targets: [{ pane_id: 'p1', agent: 'claude', state: 'idle', folder: '/w', title: 'claude', askable: true }] });
  if (method === 'is_alive') return Promise.resolve(params.pane_id === 'p2' ? { alive: false, exit_code: 0, signal: null } : { alive: false });
  return Promise.reject(new Error(`unexpected ${method}`));
}) as unknown as RpcCall;

describe('the MCP tools over JSON-RPC', () => {
  it('waits on an agent pane, says a pane exited, and answers PANE_NOT_FOUND for a pane that never was', async () => {
    const backend = new RpcMcpBackend(call);
    expect(await backend.wait({ pane_id: 'p1', until: 'idle', timeout_ms: 1_000 })).toEqual({ matched: true, state: 'idle' });
    expect(await backend.wait({ pane_id: 'p2', until: 'idle', timeout_ms: 1_000 })).toEqual({ matched: false, state: 'exited' });
    const missing = await backend.wait({ pane_id: 'p9', until: 'idle', timeout_ms: 1_000 }).catch((err: unknown) => err);
    expect(isSwitchboardError(missing) && missing.code).toBe('PANE_NOT_FOUND');
  });
});
