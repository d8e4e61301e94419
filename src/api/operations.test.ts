import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentCatalog } from '../agents/index.js';
import { isSwitchboardError, SwitchboardError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { LogService } from '../logs/index.js';
import { PaneRegistry } from '../pane/index.js';
import { METHOD_GROUPS, METHOD_NAMES, paramSchemas, resultSchemas, type MethodName, type ParamsInput, type Result } from '../protocol/methods.js';
import type { CallerLike, OperationContext } from './context.js';
import { handlers, operationsPort } from './operations.js';
import { invoke } from './invoke.js';
import { runOperations, type RunsPort } from './bridge-operations.js';
import { createServices, type DaemonControl, type Services } from './services.js';

/** What a daemon says of itself, for operations that ask (no dashboard: its login link is a CONFLICT). */
const daemon: DaemonControl = {
  info: () => ({
    name: 'switchboard',
    version: '0.0.0',
    pid: process.pid,
    started_at: new Date(0).toISOString(),
    uptime_ms: 1,
    panes: { total: 0, alive: 0 },
    transports: {},
    limits: { max_request_bytes: 1, max_connections: 1 },
    memory: { rss: 1, heap_total: 1, heap_used: 1, external: 1, array_buffers: 1 },
    output_budget: { total_bytes: 1, members: 0, share_bytes: 1, spill_total_bytes: 1 },
  }),
  home: '/nonexistent',
  exportsMaxBytes: 0,
  dashboardLoginUrl: () => {
    throw new SwitchboardError('CONFLICT', 'the dashboard is off in this daemon');
  },
  requestShutdown: () => undefined,
};

const noCaller: CallerLike = {
  subscribe: () => 's1',
  nodePaneSubscribe: () => Promise.resolve('s4'),
  logSubscribe: () => 's2',
  nodeLogSubscribe: () => Promise.resolve('s5'),
  runSubscribe: () => Promise.resolve('s3'),
  unsubscribe: (id) => {
    throw new SwitchboardError('INVALID_PARAMS', `no such subscription: ${id}`);
  },
};

/**
 * The operations over real services with no pane running (no PTY is started here; tests/ drive
 * real panes): each call's params go through the method's schema and its result is checked
 * against the result schema, as the wire would.
 */
describe('the operations', () => {
  let services: Services & { dispose(): void };
  let ctx: OperationContext;

  beforeEach(() => {
    const panes = new PaneRegistry();
    const agents = new AgentCatalog();
    services = createServices({ panes, agents, logs: new LogService(panes, agents), daemon });
    ctx = { ...services, caller: noCaller, signal: new AbortController().signal };
  });

  afterEach(async () => {
    services.dispose();
    await services.logs.close();
    await services.panes.close({ graceMs: 0 });
  });

  async function call<M extends MethodName>(method: M, params: ParamsInput<M>): Promise<Result<M>> {
    const parsed = paramSchemas[method].parse(params);
    const result = await (handlers[method] as (c: OperationContext, p: unknown) => unknown)(ctx, parsed);
    const checked = resultSchemas[method].safeParse(result);
    if (!checked.success) throw new Error(`${method}: the result does not match its schema: ${checked.error.message}`);
    return result as Result<M>;
  }

  async function failure(method: MethodName, params: Record<string, unknown>): Promise<SwitchboardError> {
    try {
      await call(method, params as never);
    } catch (err) {
      if (isSwitchboardError(err)) return err;
      throw err;
    }
    throw new Error(`${method} did not fail`);
  }

  it('has one handler per method, each in its group', () => {
    expect(Object.keys(handlers).sort()).toEqual([...METHOD_NAMES].sort());
    expect(Object.values(METHOD_GROUPS).flat().length).toBe(METHOD_NAMES.length);
  });

  it('answers the daemon group', async () => {
    expect((await call('ping', {})).pong).toBe(true);
    expect((await call('info', {})).name).toBe('switchboard');
    expect((await failure('dashboard_login', {})).code).toBe('CONFLICT');
  });

  it('lists no panes and no agent states, and calls an unknown pane not alive', async () => {
    expect(await call('list', {})).toEqual({ panes: [] });
    expect(await call('pane_states', {})).toEqual({ states: [] });
    expect(await call('is_alive', { pane_id: 'p00000000' })).toEqual({ alive: false });
    expect((await failure('get_text', { pane_id: 'p00000000' })).code).toBe('PANE_NOT_FOUND');
    expect((await failure('answer_approval', { pane_id: 'p00000000', decision: 'allow' })).code).toBe('PANE_NOT_FOUND');
  });

  it('lists the built-in agent profiles', async () => {
    const { agents } = await call('agents', {});
    expect(agents.map((a) => a.name)).toEqual(expect.arrayContaining(['claude', 'codex', 'gemini', 'shell']));
  });

  it("reads a session's log: listed, its history after a seq, unknown ones refused", async () => {
    const log = services.logs.logs.open({ id: 'r1', kind: 'run', title: 'a run', agent: 'claude', spill: false });
    log.store.push({ type: 'stdout', content: 'one' });
    log.store.push({ type: 'normalized', entry: { id: 'e1', type: 'assistant_message', timestamp: 1, content: 'two' } });
    const { sessions } = await call('log_sessions', {});
    expect(sessions).toEqual([expect.objectContaining({ session_id: 'r1', kind: 'run', title: 'a run', agent: 'claude', finished: false })]);
    const history = await call('log_get_history', { session_id: 'r1', after_seq: 1 });
    expect(history.messages.map((m) => m.seq)).toEqual([2]);
    expect(history.last_seq).toBe(2);
    expect((await failure('log_get_history', { session_id: 'nope' })).code).toBe('SESSION_NOT_FOUND');
    expect((await failure('cancel_run', { session_id: 'nope' })).code).toBe('SESSION_NOT_FOUND');
  });

  it('refuses a structured run of an agent without a headless mode', async () => {
    const err = await failure('run_agent', { agent: 'shell', prompt: 'hi', cwd: process.cwd() });
    expect(err.code).toBe('INVALID_PARAMS');
    expect(err.message).toBe('shell has no headless mode');
  });

  it('runs a tmux command line without starting a pane', async () => {
    const reply = await call('tmux_command', { argv: ['-V'] });
    expect(reply.exit_code).toBe(0);
    expect(reply.stdout).toMatch(/^tmux /);
  });

  it('answers the ask group with no agent pane: no targets, unknown names and asks refused, a pane speaks only for itself', async () => {
    expect(await call('ask_targets', {})).toEqual({ targets: [] });
    expect(await call('ask_list', {})).toEqual({ asks: [] });
    expect((await failure('ask', { target: 'codex', question: 'hi?' })).code).toBe('PANE_NOT_FOUND');
    expect((await failure('ask_get', { ask_id: '0123456789' })).code).toBe('ASK_NOT_FOUND');
    expect((await failure('set_askable', { pane_id: 'p00000000', askable: false })).code).toBe('PANE_NOT_FOUND');
    ctx = { ...ctx, grant: { owner: false, scopes: new Set(['read', 'ask'] as const), paneId: 'p11111111' } };
    const spoofed = await failure('ask', { target: 'codex', question: 'hi?', from_pane_id: 'p22222222' });
    expect(spoofed.code).toBe('FORBIDDEN');
    expect(spoofed.message).toMatch(/may ask only as pane p11111111/);
  });

  it('is reached one way from every surface: the port answers as invoke (the dispatcher\'s path) does, with the same codes and words', async () => {
    const port = operationsPort(services);
    const owner = { grant: { owner: true, scopes: new Set(['read'] as const) }, signal: new AbortController().signal };
    const reader = { grant: { owner: false, scopes: new Set(['read'] as const), paneId: 'p11111111' }, signal: new AbortController().signal };
    async function both(method: string, params: unknown, caller: typeof owner): Promise<[SwitchboardError, SwitchboardError]> {
      const viaPort = await port.call(method as 'ping', params as never, caller).then(() => new Error(`${method} passed`), (e: unknown) => e);
      const viaInvoke = await invoke(handlers as never, { ...ctx, grant: caller.grant }, method, params).then(() => new Error(`${method} passed`), (e: unknown) => e);
      if (!isSwitchboardError(viaPort) || !isSwitchboardError(viaInvoke)) throw new Error(`${method}: not a SwitchboardError (${String(viaPort)}, ${String(viaInvoke)})`);
      return [viaPort, viaInvoke];
    }
    // A param the schema refuses.
    const [badPort, badInvoke] = await both('get_text', { pane_id: 'p00000000', lines: 'ten' }, owner);
    expect(badPort.code).toBe('INVALID_PARAMS');
    expect(badPort.message).toBe(badInvoke.message);
    expect(badPort.message).toMatch(/^invalid params for get_text: lines/);
    // A scope the grant lacks, before the handler runs.
    const [scopePort, scopeInvoke] = await both('send_text', { pane_id: 'p00000000', text: 'x' }, reader);
    expect(scopePort.code).toBe('FORBIDDEN');
    expect(scopePort.message).toBe(scopeInvoke.message);
    // A method nobody has.
    expect((await both('no_such_method', {}, owner))[0].code).toBe('METHOD_NOT_FOUND');
    // The handler's own answer.
    expect((await both('get_text', { pane_id: 'p00000000' }, owner))[0].code).toBe('PANE_NOT_FOUND');
    // What delivers notifications is refused: a port's caller has nowhere to receive them.
    const refused = await (port as unknown as { call(m: string, p: unknown, c: typeof owner): Promise<unknown> }).call('log_subscribe', { session_id: 'nope' }, owner).catch((e: unknown) => e);
    expect(isSwitchboardError(refused) && refused.code).toBe('SESSION_NOT_FOUND');
    services.logs.logs.open({ id: 'r2', kind: 'run', title: 'a run', agent: 'claude', spill: false });
    const noSink = await (port as unknown as { call(m: string, p: unknown, c: typeof owner): Promise<unknown> }).call('log_subscribe', { session_id: 'r2' }, owner).catch((e: unknown) => e);
    expect(isSwitchboardError(noSink) && noSink.code).toBe('INVALID_REQUEST');
  });

  it('answers a failure that is no SwitchboardError as INTERNAL_ERROR without its details, and logs it', async () => {
    const logged: string[] = [];
    const logger: Logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: (msg, fields) => {
        logged.push(`${msg} ${String(fields?.method)}`);
      },
      child: () => logger,
    };
    const failing = (): never => {
      throw new TypeError('secret path /home/x');
    };
    const port = operationsPort(services, { ping: failing }, logger);
    const err = await port.call('ping', {}, { grant: { owner: true, scopes: new Set(['read'] as const) }, signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isSwitchboardError(err) && { code: err.code, message: err.message }).toEqual({ code: 'INTERNAL_ERROR', message: 'internal error while running ping' });
    expect(logged).toEqual(['internal error ping']);
  });

  it('serves the run methods over a run service alone with the same checks (the HTTP API on its own)', async () => {
    const seen: string[] = [];
    const runs = { get: (id: string) => (seen.push(id), Promise.reject(new SwitchboardError('RUN_NOT_FOUND', `no run ${id}`))) } as unknown as RunsPort;
    const port = runOperations(runs);
    const reader = { grant: { owner: false, scopes: new Set(['read'] as const), paneId: 'p11111111' }, signal: new AbortController().signal };
    const notFound = await port.call('run_get', { run_id: 'r_0123456789abcdef' }, reader).catch((e: unknown) => e);
    expect(isSwitchboardError(notFound) && notFound.code).toBe('RUN_NOT_FOUND');
    expect(seen).toEqual(['r_0123456789abcdef']);
    const bad = await port.call('run_get', { run_id: 'no run!' }, reader).catch((e: unknown) => e);
    expect(isSwitchboardError(bad) && bad.code).toBe('INVALID_PARAMS');
    // Ending a run, or its turn, takes the create scope: a reader may not.
    for (const method of ['run_cancel', 'run_interrupt'] as const) {
      const forbidden = await port.call(method, { run_id: 'r_0123456789abcdef' }, reader).catch((e: unknown) => e);
      expect(isSwitchboardError(forbidden) && forbidden.code, method).toBe('FORBIDDEN');
    }
    expect(seen).toEqual(['r_0123456789abcdef']);
  });
});
