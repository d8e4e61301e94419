import { describe, expect, it } from 'vitest';
import { memoryTransportPair } from '../protocol/memory-transport.js';
import type { MessageTransport } from '../protocol/transport.js';
import { RpcError, SwitchboardClient } from './client.js';

/** The daemon's end, scripted by the test: it reads requests and answers as told. */
class ScriptedDaemon {
  readonly requests: { id: number; method: string; params: Record<string, unknown> }[] = [];
  private waiters: (() => void)[] = [];

  constructor(readonly transport: MessageTransport) {
    transport.start({
      receive: (inputs) => {
        for (const input of inputs) if (input.kind === 'message') this.requests.push(JSON.parse(input.data.toString('utf8')) as ScriptedDaemon['requests'][number]);
        for (const w of this.waiters.splice(0)) w();
      },
      endOfInput: () => undefined,
      drained: () => undefined,
      closed: () => undefined,
    });
  }

  async request(n: number): Promise<ScriptedDaemon['requests'][number]> {
    while (this.requests.length < n) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.requests[n - 1] as ScriptedDaemon['requests'][number];
  }

  send(...messages: unknown[]): void {
    for (const m of messages) this.transport.send(JSON.stringify(m));
  }
}

function pair(timeoutMs?: number): { client: SwitchboardClient; daemon: ScriptedDaemon } {
  const [a, b] = memoryTransportPair();
  return { client: SwitchboardClient.over(a, { token: 'tok', requestTimeoutMs: timeoutMs }), daemon: new ScriptedDaemon(b) };
}

describe('the client', () => {
  it('sends the token with every request and resolves with the result', async () => {
    const { client, daemon } = pair();
    const pong = client.ping();
    const req = await daemon.request(1);
    expect(req).toEqual({ jsonrpc: '2.0', id: 1, method: 'ping', params: { token: 'tok' } });
    daemon.send({ jsonrpc: '2.0', id: req.id, result: { pong: true, time: 'now' } });
    expect(await pong).toEqual({ pong: true, time: 'now' });
    client.close();
  });

  it('rejects with the stable code: from data.code, else from the number', async () => {
    const { client, daemon } = pair();
    const a = client.isAlive('p1');
    const b = client.isAlive('p2');
    const c = client.isAlive('p3');
    await daemon.request(3);
    daemon.send(
      { jsonrpc: '2.0', id: 1, error: { code: -32013, message: 'busy', data: { code: 'CONFLICT', pane_id: 'p1' } } },
      { jsonrpc: '2.0', id: 2, error: { code: -32002, message: 'no such pane' } },
      { jsonrpc: '2.0', id: 3, error: { code: -1, message: 'odd' } },
    );
    const errA = await a.catch((e: unknown) => e);
    expect(errA).toBeInstanceOf(RpcError);
    expect(errA).toMatchObject({ code: 'CONFLICT', rpcErrorCode: -32013, details: { code: 'CONFLICT', pane_id: 'p1' } });
    await expect(b).rejects.toMatchObject({ code: 'PANE_NOT_FOUND' });
    await expect(c).rejects.toMatchObject({ code: 'INTERNAL_ERROR' });
    client.close();
  });

  it('gives up on a reply that does not come in time, and ignores it if it comes later', async () => {
    const { client, daemon } = pair(50);
    await expect(client.ping()).rejects.toMatchObject({ code: 'TIMEOUT', message: 'ping got no reply within 50 ms' });
    daemon.send({ jsonrpc: '2.0', id: 1, result: { pong: true, time: 'late' } });
    const next = client.ping();
    await daemon.request(2);
    daemon.send({ jsonrpc: '2.0', id: 2, result: { pong: true, time: 'on time' } });
    expect((await next).time).toBe('on time');
    client.close();
  });

  it("hands a subscription's notifications to handlers attached before the first one", async () => {
    const { client, daemon } = pair();
    const outputs: string[] = [];
    const subscribed = client.subscribe({ paneId: 'p1' }, { output: (n) => outputs.push(n.data) });
    await daemon.request(1);
    // The reply and the first notification arrive together.
    daemon.send({ jsonrpc: '2.0', id: 1, result: { subscription: 's1' } }, { jsonrpc: '2.0', method: 'output', params: { subscription: 's1', pane_id: 'p1', data: 'hello', offset: 0 } });
    const sub = await subscribed;
    await expect.poll(() => outputs).toEqual(['hello']);
    daemon.send({ jsonrpc: '2.0', method: 'output', params: { subscription: 'other', pane_id: 'p1', data: 'not mine', offset: 5 } });
    const unsubscribed = sub.unsubscribe();
    await daemon.request(2);
    daemon.send({ jsonrpc: '2.0', id: 2, result: { success: true } });
    await unsubscribed;
    expect(outputs).toEqual(['hello']);
    client.close();
  });

  it('fails pending calls when the connection goes, and every call after', async () => {
    const { client, daemon } = pair();
    const closed = new Promise<Error | undefined>((resolve) => client.onClose(resolve));
    const pending = client.ping();
    await daemon.request(1);
    daemon.transport.close(false);
    await expect(pending).rejects.toMatchObject({ code: 'CONNECTION_FAILED', message: 'connection closed by the daemon' });
    expect(await closed).toMatchObject({ code: 'CONNECTION_FAILED' });
    await expect(client.ping()).rejects.toMatchObject({ code: 'CONNECTION_FAILED' });
  });

  it('fails pending calls with "connection closed" when closed by its owner', async () => {
    const { client, daemon } = pair();
    const pending = client.ping();
    await daemon.request(1);
    client.close();
    await expect(pending).rejects.toMatchObject({ code: 'CONNECTION_FAILED', message: 'connection closed' });
  });
});
