import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentCatalog } from '../../agents/index.js';
import { createServices, TokenRegistry, type DaemonControl, type Services } from '../../api/index.js';
import { LogLimiter } from '../../core/log-limiter.js';
import { silentLogger } from '../../core/logger.js';
import { generateToken } from '../../core/secrets.js';
import { LogService } from '../../logs/index.js';
import { PaneRegistry } from '../../pane/index.js';
import { memoryTransportPair } from '../../protocol/memory-transport.js';
import type { MessageTransport, TransportInput } from '../../protocol/transport.js';
import { RpcError, SwitchboardClient } from '../../client/client.js';
import { provenAtConnect, tokenInEveryRequest, type RequestAuthentication } from './authenticate.js';
import { Dispatcher } from './dispatch.js';
import { DEFAULT_CONNECTION_LIMITS, RpcPeer, type ConnectionLimits } from './peer.js';

const daemon: DaemonControl = {
  info: () => {
    throw new Error('not asked here');
  },
  home: '/nonexistent',
  exportsMaxBytes: 0,
  dashboardLoginUrl: () => 'http://127.0.0.1:1/login?code=x',
  requestShutdown: () => undefined,
};

/** The other end of a connection as raw messages: what a misbehaving client sends and reads. */
class RawEnd {
  readonly messages: unknown[] = [];
  closed = false;
  private waiters: (() => void)[] = [];

  constructor(readonly transport: MessageTransport) {
    transport.start({
      receive: (inputs: readonly TransportInput[]) => {
        for (const input of inputs) if (input.kind === 'message') this.messages.push(JSON.parse(input.data.toString('utf8')));
        this.wake();
      },
      endOfInput: () => undefined,
      drained: () => undefined,
      closed: () => {
        this.closed = true;
        this.wake();
      },
    });
  }

  send(text: string): void {
    this.transport.send(text);
  }

  async until(done: () => boolean): Promise<void> {
    while (!done()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

describe('a JSON-RPC peer and the client, connected in memory', () => {
  let services: Services & { dispose(): void };
  let tokens: TokenRegistry;
  let owner: string;
  /** Lets go of every `hold` request in flight. */
  const held: (() => void)[] = [];
  const release = (): void => {
    for (const resolve of held.splice(0)) resolve();
  };
  const peers: RpcPeer[] = [];

  beforeEach(() => {
    const panes = new PaneRegistry();
    const agents = new AgentCatalog();
    services = createServices({ panes, agents, logs: new LogService(panes, agents), daemon });
    owner = generateToken();
    tokens = new TokenRegistry(owner);
  });

  afterEach(async () => {
    release();
    for (const peer of peers.splice(0)) peer.close('test over');
    services.dispose();
    await services.logs.close();
    await services.panes.close({ graceMs: 0 });
  });

  function connect(options: { authentication?: RequestAuthentication; limits?: Partial<ConnectionLimits>; maxMessageBytes?: number } = {}): { server: MessageTransport; client: MessageTransport; peer: RpcPeer } {
    const limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
    const dispatcher = new Dispatcher({
      logger: silentLogger,
      checkResults: true,
      handlers: {
        // Test methods (they need the admin scope): one that waits to be let go, one with a large reply.
        hold: () => new Promise<{ held: true }>((resolve) => held.push(() => resolve({ held: true }))),
        large: () => ({ data: 'x'.repeat(4096) }),
      },
    });
    const [server, client] = memoryTransportPair({ maxMessageBytes: options.maxMessageBytes ?? limits.maxRequestBytes });
    const peer = new RpcPeer(
      server,
      { dispatcher, services, limits, logger: silentLogger, strangerLog: new LogLimiter(silentLogger) },
      { authentication: options.authentication ?? tokenInEveryRequest(tokens.authenticate) },
      () => undefined,
    );
    peers.push(peer);
    return { server, client, peer };
  }

  it('answers the typed client, every result as its schema says', async () => {
    const client = SwitchboardClient.over(connect().client, { token: owner });
    expect((await client.ping()).pong).toBe(true);
    expect(await client.list()).toEqual({ panes: [] });
    expect(await client.paneStates()).toEqual({ states: [] });
    expect(await client.logSessions()).toEqual({ sessions: [] });
    expect((await client.dashboardLogin()).url).toMatch(/^http:/);
    client.close();
  });

  it('maps errors to their stable codes and numbers', async () => {
    const client = SwitchboardClient.over(connect().client, { token: owner });
    const err = await client.getText('p00000000').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect(err).toMatchObject({ code: 'PANE_NOT_FOUND', rpcErrorCode: -32002 });
    await expect(client.request('no_such_method' as never, {} as never)).rejects.toMatchObject({ code: 'METHOD_NOT_FOUND' });
    await expect(client.request('get_text', { pane_id: 'p1', colour: 1 } as never)).rejects.toMatchObject({ code: 'INVALID_PARAMS', message: "invalid params for get_text: unknown parameter 'colour'" });
    client.close();
  });

  it('refuses a wrong token, and lets go of a client that never shows a good one', async () => {
    const client = SwitchboardClient.over(connect({ limits: { unauthenticatedTimeoutMs: 100 } }).client, { token: generateToken() });
    const closed = new Promise<Error | undefined>((resolve) => client.onClose(resolve));
    await expect(client.ping()).rejects.toMatchObject({ code: 'INVALID_TOKEN', rpcErrorCode: -32001 });
    expect(await closed).toMatchObject({ code: 'CONNECTION_FAILED', message: 'connection closed by the daemon' });
  });

  it("checks a pane's scoped token against each method's scope", async () => {
    const scoped = tokens.issue('p1', ['read', 'ask']);
    const client = SwitchboardClient.over(connect().client, { token: scoped });
    expect((await client.ping()).pong).toBe(true);
    await expect(client.shutdown()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    tokens.revokePane('p1');
    await expect(client.ping()).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    client.close();
  });

  it('takes requests without a token on a connection proven when it opened, dropping one sent anyway', async () => {
    const { client } = connect({ authentication: provenAtConnect() });
    const raw = new RawEnd(client);
    raw.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
    raw.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'list', params: { token: 'not a credential here' } }));
    await raw.until(() => raw.messages.length === 2);
    expect(raw.messages).toEqual([expect.objectContaining({ id: 1, result: expect.objectContaining({ pong: true }) as unknown }), { jsonrpc: '2.0', id: 2, result: { panes: [] } }]);
  });

  it('answers bad input with its error and keeps the connection: parse errors, oversize, batches, notifications', async () => {
    const raw = new RawEnd(connect({ maxMessageBytes: 256 }).client);
    const auth = { token: owner };
    raw.send('{not json');
    raw.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { ...auth, pad: 'x'.repeat(300) } }));
    raw.send(JSON.stringify({ jsonrpc: '2.0', method: 'ping', params: auth }));
    raw.send(JSON.stringify([{ jsonrpc: '2.0', id: 2, method: 'ping', params: auth }, { jsonrpc: '2.0', id: 3, method: 'nope', params: auth }]));
    await raw.until(() => raw.messages.length === 3);
    expect(raw.messages[0]).toMatchObject({ id: null, error: { code: -32700, data: { code: 'PARSE_ERROR' } } });
    expect(raw.messages[1]).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining('exceeds the request size limit') as unknown } });
    expect(raw.messages[2]).toEqual([expect.objectContaining({ id: 2 }), expect.objectContaining({ id: 3, error: expect.objectContaining({ code: -32601 }) as unknown })]);
    expect(raw.closed).toBe(false);
  });

  it('stops reading while its requests in flight are at the limit, and reads again as they finish', async () => {
    const { client, peer } = connect({ limits: { maxInFlight: 2 } });
    const raw = new RawEnd(client);
    const hold = (id: number): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'hold', params: { token: owner } });
    raw.send(hold(1));
    raw.send(hold(2));
    raw.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping', params: { token: owner } }));
    await expect.poll(() => peer.isPaused).toBe(true);
    await expect.poll(() => held.length).toBe(2);
    expect(raw.messages).toEqual([]);
    release();
    await raw.until(() => raw.messages.length === 3);
    expect(peer.isPaused).toBe(false);
  });

  it('closes a client that does not read its replies', async () => {
    const { client } = connect({ limits: { maxOutboundBytes: 1024 } });
    const raw = new RawEnd(client);
    raw.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { token: owner } }));
    await raw.until(() => raw.messages.length === 1);
    client.pause();
    raw.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'large', params: { token: owner } }));
    await raw.until(() => raw.closed);
    expect(raw.closed).toBe(true);
  });

  it("streams a session log's messages to the client's subscription, then its end", async () => {
    const log = services.logs.logs.open({ id: 'r1', kind: 'run', title: 'a run', spill: false });
    log.store.push({ type: 'stdout', content: 'one' });
    const client = SwitchboardClient.over(connect().client, { token: owner });
    const seen: number[] = [];
    const finished = new Promise<void>((resolve) => {
      void client.logSubscribe('r1', {}, { log_message: (n) => seen.push(...n.messages.map((m) => m.seq)), log_finished: () => resolve() });
    });
    await expect.poll(() => seen.length).toBe(1);
    log.store.push({ type: 'stdout', content: 'two' });
    log.store.finish();
    await finished;
    expect(seen).toEqual([1, 2]);
    client.close();
  });
});
