import { describe, expect, it } from 'vitest';
import { LineRpc, METHOD_NOT_FOUND, RpcClosedError, RpcError } from './line-rpc.js';

/** A LineRpc whose written lines are kept, with the other side's answers fed back by the test. */
function peer(handlers: Partial<ConstructorParameters<typeof LineRpc>[1]> = {}): { rpc: LineRpc; written: Record<string, unknown>[]; notes: [string, unknown][]; garbage: string[]; open: { value: boolean } } {
  const written: Record<string, unknown>[] = [];
  const notes: [string, unknown][] = [];
  const garbage: string[] = [];
  const open = { value: true };
  const rpc = new LineRpc(
    (line) => {
      if (!open.value) return false;
      written.push(JSON.parse(line) as Record<string, unknown>);
      return true;
    },
    {
      onRequest: handlers.onRequest ?? (() => Promise.resolve({ ok: true })),
      onNotification: (method, params) => notes.push([method, params]),
      onGarbage: (line) => garbage.push(line),
    },
  );
  return { rpc, written, notes, garbage, open };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('LineRpc', () => {
  it('sends requests without the jsonrpc member and pairs answers by id, in any order', async () => {
    const { rpc, written } = peer();
    const a = rpc.request('thread/start', { cwd: '/w' });
    const b = rpc.request('initialize');
    expect(written).toEqual([{ method: 'thread/start', id: 1, params: { cwd: '/w' } }, { method: 'initialize', id: 2 }]);
    rpc.receive(JSON.stringify({ id: 2, result: { b: 1 } }));
    rpc.receive(JSON.stringify({ id: 1, error: { code: -32600, message: 'no such thread' } }));
    await expect(b).resolves.toEqual({ b: 1 });
    await expect(a).rejects.toMatchObject({ name: 'RpcError', code: -32600, message: 'no such thread' });
  });

  it('answers the other side’s requests with the handler’s result, or its error', async () => {
    const { rpc, written } = peer({
      onRequest: (r) => (r.method === 'approve' ? Promise.resolve({ decision: 'decline' }) : Promise.reject(new RpcError(METHOD_NOT_FOUND, `no ${r.method}`))),
    });
    rpc.receive(JSON.stringify({ method: 'approve', id: 0, params: { itemId: 'x' } }));
    rpc.receive(JSON.stringify({ method: 'other', id: 'k' }));
    await tick();
    expect(written).toEqual([
      { id: 0, result: { decision: 'decline' } },
      { id: 'k', error: { code: METHOD_NOT_FOUND, message: 'no other' } },
    ]);
  });

  it('hands notifications over, and lines that are not messages to onGarbage without throwing', () => {
    const { rpc, notes, garbage } = peer();
    rpc.receive(JSON.stringify({ method: 'item/agentMessage/delta', params: { delta: 'Hi' } }));
    rpc.receive('not json at all');
    rpc.receive('[1,2]');
    rpc.receive(JSON.stringify({ result: 1 }));
    rpc.receive('');
    expect(notes).toEqual([['item/agentMessage/delta', { delta: 'Hi' }]]);
    expect(garbage).toEqual(['not json at all', '[1,2]', '{"result":1}']);
  });

  it('rejects what is still waiting when the connection closes, and anything asked after', async () => {
    const { rpc, open } = peer();
    const waiting = rpc.request('turn/start');
    rpc.close();
    await expect(waiting).rejects.toBeInstanceOf(RpcClosedError);
    await expect(rpc.request('turn/start')).rejects.toBeInstanceOf(RpcClosedError);
    const other = peer();
    other.open.value = false;
    await expect(other.rpc.request('x')).rejects.toBeInstanceOf(RpcClosedError);
    expect(open.value).toBe(true);
  });
});
