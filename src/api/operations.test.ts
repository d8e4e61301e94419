import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentCatalog } from '../agents/index.js';
import { isSwitchboardError, SwitchboardError } from '../core/errors.js';
import { LogService } from '../logs/index.js';
import { PaneRegistry } from '../pane/index.js';
import { METHOD_GROUPS, METHOD_NAMES, paramSchemas, resultSchemas, type MethodName, type ParamsInput, type Result } from '../protocol/methods.js';
import type { CallerLike, OperationContext } from './context.js';
import { handlers } from './operations.js';
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
  logSubscribe: () => 's2',
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
});
