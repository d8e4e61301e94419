import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statSync, readFileSync } from 'node:fs';
import { SwitchboardError } from '../src/core/errors.js';
import { rpcCodeOf } from '../src/protocol/rpc-codes.js';
import type { Daemon } from '../src/daemon/index.js';
import { runtimeFilePath } from '../src/daemon/index.js';
import { RawClient, TRANSPORTS, errorOf, resultOf, startTestDaemon, type Transport } from './support/daemon.js';
import { BASH_ARGV, BASH_ENV, sleep, tempDir } from './support/shell.js';
import { until } from './support/processes.js';

let daemon: Daemon;
let stop: () => Promise<void>;
let token: string;
let work: { dir: string; cleanup: () => void };

beforeAll(async () => {
  ({ daemon, stop } = await startTestDaemon({
    handlers: {
      // A method that fails the way a bug would, to see -32603 travel over the wire.
      debug_fail: () => {
        throw new Error('boom');
      },
    },
  }));
  token = daemon.token;
  work = tempDir();
});

afterAll(async () => {
  await stop();
  work.cleanup();
});

async function newShell(client: RawClient, title = 'shell'): Promise<string> {
  const created = resultOf<{ pane_id: string; title: string; pid: number }>(
    await client.call(token, 'create_pane', { argv: [...BASH_ARGV], cwd: work.dir, title, env: BASH_ENV }),
  );
  const waited = resultOf<{ matched: boolean }>(await client.call(token, 'wait_for', { pane_id: created.pane_id, pattern: 'PROMPT\\$', timeout_ms: 15_000 }));
  expect(waited.matched).toBe(true);
  return created.pane_id;
}

describe('runtime file and socket', () => {
  it('publishes host, port, socket, pid and token in a 0600 file inside a 0700 directory', () => {
    const file = runtimeFilePath(daemon.home);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(daemon.home).mode & 0o777).toBe(0o700);
    const info = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(info).toMatchObject({ host: '127.0.0.1', port: daemon.tcp?.port, socket: daemon.socketPath, pid: process.pid, token });
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(daemon.socketPath as string).mode & 0o777).toBe(0o600);
  });
});

describe.each(TRANSPORTS)('JSON-RPC over %s', (transport: Transport) => {
  let client: RawClient;

  beforeAll(async () => {
    client = await RawClient.connect(daemon, transport);
  });

  afterAll(() => client.close());

  it('runs the seed methods against a real shell: create_pane, send_text, is_alive, get_text, list, kill', async () => {
    // The seed's shape: a command string and a cwd.
    const created = resultOf<{ pane_id: string; title: string; pid: number }>(
      // (A non-interactive `bash -c` drops PS1 from what it passes on, so the prompt is set inline.)
      await client.call(token, 'create_pane', { command: "env PS1='PROMPT$ ' bash --norc --noprofile -i", cwd: work.dir, title: 'seed', env: BASH_ENV }),
    );
    expect(created.title).toBe('seed');
    expect(created.pane_id).toMatch(/^p[0-9a-f]{8}$/);
    const id = created.pane_id;
    expect(resultOf(await client.call(token, 'wait_for', { pane_id: id, pattern: 'PROMPT\\$' })).matched).toBe(true);

    expect(resultOf(await client.call(token, 'send_text', { pane_id: id, text: 'echo seed-$((6*7))', add_newline: true }))).toEqual({ success: true });
    // The output, and the prompt drawn after it (bash may draw it a moment later on a busy machine).
    expect(resultOf(await client.call(token, 'wait_for', { pane_id: id, pattern: '^seed-42\\nPROMPT\\$', flags: 'm' })).matched).toBe(true);

    expect(resultOf(await client.call(token, 'is_alive', { pane_id: id }))).toEqual({ alive: true, pid: created.pid });

    const text = resultOf<{ text: string; total_lines: number }>(await client.call(token, 'get_text', { pane_id: id, lines: 2 }));
    expect(text.text).toBe('seed-42\nPROMPT$');
    expect(text.total_lines).toBeGreaterThanOrEqual(3);
    const defaultLines = resultOf<{ text: string }>(await client.call(token, 'get_text', { pane_id: id }));
    expect(defaultLines.text).toContain('echo seed-$((6*7))');

    const listed = resultOf<{ panes: Record<string, unknown>[] }>(await client.call(token, 'list'));
    const entry = listed.panes.find((p) => p.pane_id === id);
    expect(entry).toMatchObject({ pane_id: id, title: 'seed', alive: true, pid: created.pid, cwd: work.dir, cols: 120, rows: 30 });

    expect(resultOf(await client.call(token, 'kill', { pane_id: id }))).toMatchObject({ success: true });
    expect(resultOf(await client.call(token, 'is_alive', { pane_id: id }))).toMatchObject({ alive: false });
    const after = resultOf<{ panes: Record<string, unknown>[] }>(await client.call(token, 'list'));
    expect(after.panes.find((p) => p.pane_id === id)).toMatchObject({ alive: false });
    expect(resultOf(await client.call(token, 'remove', { pane_id: id }))).toEqual({ success: true });
    const gone = resultOf<{ panes: Record<string, unknown>[] }>(await client.call(token, 'list'));
    expect(gone.panes.find((p) => p.pane_id === id)).toBeUndefined();
  });

  it('runs resize, send_keys, paste, get_screen, wait_for, info and ping', async () => {
    const id = await newShell(client);
    expect(resultOf(await client.call(token, 'resize', { pane_id: id, cols: 100, rows: 20 }))).toEqual({ success: true, cols: 100, rows: 20 });
    await client.call(token, 'send_text', { pane_id: id, text: 'stty size' });
    expect(resultOf(await client.call(token, 'send_keys', { pane_id: id, keys: ['Enter'] }))).toEqual({ success: true });
    // Readline turns bracketed paste off while a command runs: wait for the next prompt, settled.
    expect(resultOf(await client.call(token, 'wait_for', { pane_id: id, pattern: '^20 100\nPROMPT\\$', flags: 'm', idle_ms: 100 })).matched).toBe(true);

    // bash's readline enables bracketed paste, so the paste is bracketed and runs only on Enter.
    const pasted = resultOf<{ bracketed: boolean }>(await client.call(token, 'paste', { pane_id: id, text: 'echo pasted-$((1+1))' }));
    expect(pasted.bracketed).toBe(true);
    await client.call(token, 'send_keys', { pane_id: id, keys: ['Enter'] });
    const seen = resultOf<{ matched: boolean; match: string; line: string }>(await client.call(token, 'wait_for', { pane_id: id, pattern: 'pasted-2$', flags: 'm' }));
    expect(seen).toMatchObject({ matched: true, match: 'pasted-2', line: 'pasted-2' });

    await client.call(token, 'send_text', { pane_id: id, text: "printf '\\033[31mred\\033[0m\\n'", add_newline: true });
    await client.call(token, 'wait_for', { pane_id: id, pattern: '^red$', flags: 'm' });
    const plain = resultOf<{ text: string; lines: string[]; cols: number; rows: number; cursor: { x: number; y: number; visible: boolean }; alt_screen: boolean }>(
      await client.call(token, 'get_screen', { pane_id: id }),
    );
    expect(plain.lines).toHaveLength(20);
    expect(plain.cols).toBe(100);
    expect(plain.alt_screen).toBe(false);
    expect(plain.cursor.visible).toBe(true);
    expect(plain.lines).toContain('red');
    const coloured = resultOf<{ lines: string[] }>(await client.call(token, 'get_screen', { pane_id: id, ansi: true }));
    expect(coloured.lines).toContain('\x1b[0;31mred\x1b[0m');

    const idle = resultOf<{ matched: boolean; reason: string }>(await client.call(token, 'wait_for', { pane_id: id, idle_ms: 200 }));
    expect(idle).toMatchObject({ matched: true, reason: 'idle' });
    const timedOut = resultOf<{ matched: boolean; reason: string }>(await client.call(token, 'wait_for', { pane_id: id, pattern: 'never-shown', timeout_ms: 100 }));
    expect(timedOut).toMatchObject({ matched: false, reason: 'timeout' });
    const insensitive = resultOf<{ matched: boolean }>(await client.call(token, 'wait_for', { pane_id: id, pattern: 'PASTED-2', flags: 'i', lines: 50 }));
    expect(insensitive.matched).toBe(true);

    const info = resultOf<{ name: string; pid: number; panes: { alive: number }; transports: Record<string, unknown> }>(await client.call(token, 'info'));
    expect(info).toMatchObject({ name: 'switchboard', pid: process.pid });
    expect(info.panes.alive).toBeGreaterThanOrEqual(1);
    expect(info.transports).toMatchObject({ tcp: { port: daemon.tcp?.port }, socket: daemon.socketPath });
    expect(resultOf(await client.call(token, 'ping'))).toMatchObject({ pong: true });
    await client.call(token, 'remove', { pane_id: id });
  });

  it('streams output and exit notifications to subscribers, with replay', async () => {
    const id = await newShell(client);
    const sub = resultOf<{ subscription: string }>(await client.call(token, 'subscribe', { pane_id: id, events: ['output', 'exit'], replay: true }));
    await client.call(token, 'send_text', { pane_id: id, text: 'echo streamed-one; exit 3', add_newline: true });
    const exit = (await client.waitFor((m) => (m as { method?: string }).method === 'exit')) as { params: Record<string, unknown> };
    expect(exit.params).toEqual({ subscription: sub.subscription, pane_id: id, exit_code: 3, signal: null });
    const outputs = client.takeNotifications('output').map((n) => n.params as { data: string; offset: number });
    const all = outputs.map((o) => o.data).join('');
    // Replay starts at offset 0 with the prompt; live output follows without a gap.
    expect(outputs[0]?.offset).toBe(0);
    expect(all).toContain('PROMPT$');
    expect(all).toContain('streamed-one');
    for (let i = 1; i < outputs.length; i++) {
      const prev = outputs[i - 1] as { data: string; offset: number };
      expect((outputs[i] as { offset: number }).offset).toBe(prev.offset + Buffer.byteLength(prev.data));
    }
    expect(resultOf(await client.call(token, 'unsubscribe', { subscription: sub.subscription }))).toEqual({ success: true });
    expect(errorOf(await client.call(token, 'unsubscribe', { subscription: sub.subscription })).code).toBe(-32602);
    await client.call(token, 'remove', { pane_id: id });
  });

  it('sends screen frames: a full one, then only changed rows', async () => {
    const id = await newShell(client);
    const sub = resultOf<{ subscription: string }>(await client.call(token, 'subscribe', { pane_id: id, events: ['screen'] }));
    const isScreen = (m: unknown): boolean => (m as { method?: string }).method === 'screen';
    const first = (await client.waitFor(isScreen)) as { params: { full: boolean; changed: [number, string][]; rows: number; modes: Record<string, unknown> } };
    expect(first.params.full).toBe(true);
    expect(first.params.changed).toHaveLength(first.params.rows);
    expect(first.params.modes.bracketed_paste).toBe(true);
    await client.call(token, 'send_text', { pane_id: id, text: 'echo framed', add_newline: true });
    let sawFramed = false;
    for (let i = 0; i < 20 && !sawFramed; i++) {
      const frame = (await client.waitFor(isScreen)) as { params: { full: boolean; changed: [number, string][] } };
      expect(frame.params.full).toBe(false);
      expect(frame.params.changed.length).toBeLessThan(30);
      sawFramed = frame.params.changed.some(([, line]) => line === 'framed');
    }
    expect(sawFramed).toBe(true);
    await client.call(token, 'unsubscribe', { subscription: sub.subscription });
    await client.call(token, 'remove', { pane_id: id });
    client.takeNotifications();
  });

  it('answers several requests in one chunk, half-sent lines, batches and notifications', async () => {
    const line = (id: number, method: string): string => JSON.stringify({ jsonrpc: '2.0', id, method, params: { token } });
    client.send(`${line(101, 'ping')}\n${line(102, 'list')}\r\n\n${line(103, 'info')}\n`);
    const ids = new Set<number>();
    for (let i = 0; i < 3; i++) ids.add((await client.waitFor((m) => [101, 102, 103].includes((m as { id: number }).id)) as { id: number }).id);
    expect(ids).toEqual(new Set([101, 102, 103]));

    const half = line(104, 'ping');
    client.send(half.slice(0, 10));
    await sleep(50);
    client.send(half.slice(10, 25));
    await sleep(50);
    client.send(`${half.slice(25)}\n`);
    expect(resultOf(await client.waitFor((m) => (m as { id: number }).id === 104))).toMatchObject({ pong: true });

    // A batch: two requests, one notification (no reply), one invalid entry.
    client.send(
      `${JSON.stringify([
        { jsonrpc: '2.0', id: 'a', method: 'ping', params: { token } },
        { jsonrpc: '2.0', method: 'ping', params: { token } },
        { jsonrpc: '2.0', id: 'b', method: 'nope', params: { token } },
        7,
      ])}\n`,
    );
    const batch = (await client.waitFor(Array.isArray)) as Record<string, unknown>[];
    expect(batch).toHaveLength(3);
    expect(batch.find((r) => r.id === 'a')?.result).toMatchObject({ pong: true });
    expect(errorOf(batch.find((r) => r.id === 'b')).code).toBe(-32601);
    expect(errorOf(batch.find((r) => r.id === null)).code).toBe(-32600);

    // A notification alone gets no reply, even when it fails.
    client.send(`${JSON.stringify({ jsonrpc: '2.0', method: 'nope', params: { token } })}\n`);
    client.send(`${JSON.stringify({ jsonrpc: '2.0', method: 'ping', params: { token: 'wrong' } })}\n`);
    expect(resultOf(await client.call(token, 'ping', {}, 105))).toMatchObject({ pong: true });
    expect(client.takeNotifications()).toEqual([]);
  });

  it('answers every kind of bad input with the right error and keeps going', async () => {
    const expectError = async (raw: string | Buffer, code: number, stable: string, message: RegExp): Promise<void> => {
      client.send(raw);
      const reply = await client.waitFor((m) => (m as { error?: unknown }).error !== undefined);
      const err = errorOf(reply);
      expect(err.code).toBe(code);
      expect(err.data.code).toBe(stable);
      expect(err.message).toMatch(message);
    };
    await expectError('{"jsonrpc":"2.0","id":1,"method":\n', -32700, 'PARSE_ERROR', /parse error/);
    await expectError(Buffer.from([0xff, 0xfe, 0x00, 0x9c, 0x80, 0x0a]), -32700, 'PARSE_ERROR', /parse error: not valid UTF-8/);
    await expectError(Buffer.concat([Buffer.from('{"garbage":'), Buffer.from([0xc3, 0x28]), Buffer.from('}\n')]), -32700, 'PARSE_ERROR', /UTF-8/);
    await expectError('42\n', -32600, 'INVALID_REQUEST', /request object/);
    await expectError('[]\n', -32600, 'INVALID_REQUEST', /empty batch/);
    await expectError(`${JSON.stringify(Array.from({ length: 101 }, () => ({ jsonrpc: '2.0', id: 1, method: 'ping', params: { token } })))}\n`, -32600, 'INVALID_REQUEST', /batch of 101/);
    await expectError(`${JSON.stringify({ id: 2, method: 'ping', params: { token } })}\n`, -32600, 'INVALID_REQUEST', /jsonrpc must be "2.0"/);
    await expectError(`${JSON.stringify({ jsonrpc: '1.0', id: 3, method: 'ping', params: { token } })}\n`, -32600, 'INVALID_REQUEST', /jsonrpc/);
    await expectError(`${JSON.stringify({ jsonrpc: '2.0', id: 4, params: { token } })}\n`, -32600, 'INVALID_REQUEST', /method/);
    await expectError(`${JSON.stringify({ jsonrpc: '2.0', id: { x: 1 }, method: 'ping', params: { token } })}\n`, -32600, 'INVALID_REQUEST', /id must be/);
    await expectError(`${JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping', params: [token] })}\n`, -32602, 'INVALID_PARAMS', /params must be an object/);
    await expectError(`${JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'ping' })}\n`, -32001, 'INVALID_TOKEN', /token is missing/);
    await expectError(`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping', params: { token: 'x'.repeat(64) } })}\n`, -32001, 'INVALID_TOKEN', /invalid token/);
    await expectError(`${JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ping', params: { token: 12 } })}\n`, -32001, 'INVALID_TOKEN', /invalid token/);
    await expectError(`${JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'no_such_method', params: { token } })}\n`, -32601, 'METHOD_NOT_FOUND', /method not found: no_such_method/);
    await expectError(`${JSON.stringify({ jsonrpc: '2.0', id: 10, method: '__proto__', params: { token } })}\n`, -32601, 'METHOD_NOT_FOUND', /method not found/);
    await expectError(`${JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'debug_fail', params: { token } })}\n`, -32603, 'INTERNAL_ERROR', /internal error while running debug_fail/);
    expect(resultOf(await client.call(token, 'ping'))).toMatchObject({ pong: true });
  });

  it('validates parameters of every method with a clear message', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['send_text', { text: 'x' }, /pane_id/],
      ['send_text', { pane_id: 'p1', text: 5 }, /text/],
      ['send_text', { pane_id: 'p1', text: 'x', addNewline: true }, /unknown parameter 'addNewline'/],
      ['get_text', { pane_id: 'p1', lines: -1 }, /lines/],
      ['get_text', { pane_id: 'p1', lines: 'ten' }, /lines/],
      ['resize', { pane_id: 'p1', cols: 0, rows: 10 }, /cols/],
      ['send_keys', { pane_id: 'p1', keys: [] }, /keys/],
      ['wait_for', { pane_id: 'p1' }, /give pattern, idle_ms, or both/],
      ['create_pane', { cols: 5000 }, /cols/],
      ['create_pane', { env: { A: 1 } }, /env/],
      ['kill', { pane_id: 'p1', signal: 'BOGUS' }, /signal/],
      ['subscribe', { events: ['nothing'] }, /events/],
      ['list', { extra: 1 }, /unknown parameter 'extra'/],
    ];
    for (const [method, params, message] of cases) {
      const err = errorOf(await client.call(token, method, params));
      expect(err.code, `${method} ${JSON.stringify(params)}`).toBe(-32602);
      expect(err.message).toMatch(message);
    }
    // Seed clients send null for optional fields; that means "not given".
    const created = resultOf<{ pane_id: string }>(await client.call(token, 'create_pane', { command: 'true', cwd: work.dir, title: null, env: null }));
    await client.call(token, 'remove', { pane_id: created.pane_id });
  });

  it('reports an unknown pane as -32002 on every pane method, and is_alive as not alive', async () => {
    const pane = { pane_id: 'p00000000' };
    const calls: [string, Record<string, unknown>][] = [
      ['send_text', { ...pane, text: 'x' }],
      ['send_keys', { ...pane, keys: ['Enter'] }],
      ['paste', { ...pane, text: 'x' }],
      ['get_text', pane],
      ['get_screen', pane],
      ['kill', pane],
      ['remove', pane],
      ['resize', { ...pane, cols: 80, rows: 24 }],
      ['wait_for', { ...pane, idle_ms: 10 }],
      ['subscribe', pane],
    ];
    for (const [method, params] of calls) {
      const err = errorOf(await client.call(token, method, params));
      expect(err.code, method).toBe(-32002);
      expect(err.message).toBe('pane not found: p00000000');
      expect(err.data).toMatchObject({ code: 'PANE_NOT_FOUND', pane_id: 'p00000000' });
    }
    expect(resultOf(await client.call(token, 'is_alive', pane))).toEqual({ alive: false });
  });

  it('reports exited panes, bad keys, bad patterns and failed spawns with their own codes', async () => {
    const created = resultOf<{ pane_id: string }>(await client.call(token, 'create_pane', { argv: ['true'], cwd: work.dir }));
    await client.call(token, 'wait_for', { pane_id: created.pane_id, idle_ms: 50, timeout_ms: 2000 });
    await until(async () => !resultOf<{ alive: boolean }>(await client.call(token, 'is_alive', { pane_id: created.pane_id })).alive, 'the pane of `true` to exit');
    const exited = errorOf(await client.call(token, 'send_text', { pane_id: created.pane_id, text: 'x' }));
    expect(exited).toMatchObject({ code: -32004, data: { code: 'PANE_EXITED' } });
    await client.call(token, 'remove', { pane_id: created.pane_id });

    const id = await newShell(client);
    expect(errorOf(await client.call(token, 'send_keys', { pane_id: id, keys: ['Entr'] })).message).toMatch(/invalid key 'Entr'/);
    expect(errorOf(await client.call(token, 'wait_for', { pane_id: id, pattern: '(' })).message).toMatch(/invalid regular expression/);
    expect(errorOf(await client.call(token, 'wait_for', { pane_id: id, pattern: '(a)\\1' })).message).toMatch(/backtracking/);
    await client.call(token, 'remove', { pane_id: id });

    const spawn = errorOf(await client.call(token, 'create_pane', { argv: ['definitely-not-a-program'], cwd: work.dir }));
    expect(spawn).toMatchObject({ code: -32006, message: 'command not found: definitely-not-a-program' });
    const cwd = errorOf(await client.call(token, 'create_pane', { command: 'true', cwd: '/nonexistent/dir' }));
    expect(cwd).toMatchObject({ code: -32602, message: 'cwd does not exist: /nonexistent/dir' });
  });

  it('rejects an oversized request and keeps the connection', async () => {
    const limit = daemon.info().limits.max_request_bytes;
    const big = JSON.stringify({ jsonrpc: '2.0', id: 77, method: 'send_text', params: { token, pane_id: 'p1', text: 'x'.repeat(limit + 10) } });
    client.send(`${big}\n`);
    const err = errorOf(await client.waitFor((m) => (m as { error?: unknown }).error !== undefined));
    expect(err.code).toBe(-32600);
    expect(err.message).toMatch(/exceeds the request size limit/);
    expect(resultOf(await client.call(token, 'ping'))).toMatchObject({ pong: true });
  });

  it('survives clients that vanish mid-request', async () => {
    const id = await newShell(client);
    for (let i = 0; i < 5; i++) {
      const quitter = await RawClient.connect(daemon, transport);
      quitter.send(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'wait_for', params: { token, pane_id: id, pattern: 'never', timeout_ms: 60_000 } })}\n`);
      quitter.send(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'subscribe', params: { token, pane_id: id } })}\n`);
      quitter.send('{"jsonrpc":"2.0","id":3,"method":"pi');
      await sleep(20);
      quitter.close();
      const rude = await RawClient.connect(daemon, transport);
      rude.send(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'list', params: { token } })}\n`);
      rude.socket.destroy();
    }
    await client.call(token, 'send_text', { pane_id: id, text: 'echo still-here', add_newline: true });
    expect(resultOf(await client.call(token, 'wait_for', { pane_id: id, pattern: '^still-here$', flags: 'm' })).matched).toBe(true);
    await client.call(token, 'remove', { pane_id: id });
  });
});

describe('connection limits and timeouts', () => {
  it('closes connections that never authenticate, stall mid-line, or exceed the connection limit', async () => {
    const strict = await startTestDaemon({ limits: { unauthenticatedTimeoutMs: 200, partialLineTimeoutMs: 200 }, maxConnections: 3 });
    try {
      const silent = await RawClient.connect(strict.daemon, 'tcp');
      await silent.closed;
      expect(silent.isOpen).toBe(false);

      const staller = await RawClient.connect(strict.daemon, 'socket');
      expect(resultOf(await staller.call(strict.daemon.token, 'ping'))).toMatchObject({ pong: true });
      staller.send('{"jsonrpc":"2.0","id":1,');
      await staller.closed;
      expect(staller.isOpen).toBe(false);

      const kept = [await RawClient.connect(strict.daemon, 'tcp'), await RawClient.connect(strict.daemon, 'tcp'), await RawClient.connect(strict.daemon, 'socket')];
      for (const k of kept) resultOf(await k.call(strict.daemon.token, 'ping'));
      const extra = await RawClient.connect(strict.daemon, 'tcp');
      const refusal = errorOf(await extra.next());
      expect(refusal).toMatchObject({ code: -32005, data: { code: 'LIMIT_EXCEEDED' } });
      await extra.closed;
      for (const k of kept) k.close();
    } finally {
      await strict.stop();
    }
  });

  it('refuses to start a second daemon on the same home, and to listen off loopback', async () => {
    const first = await startTestDaemon();
    try {
      const { Daemon } = await import('../src/daemon/index.js');
      await expect(Daemon.start({ home: first.home, port: 0 })).rejects.toThrow(/already running|another daemon/);
      await expect(Daemon.start({ home: first.home, port: 0, socket: false, writeRuntimeFile: false, host: '0.0.0.0' })).rejects.toThrow(/only loopback/);
    } finally {
      await first.stop();
    }
  });

  it('uses the next free port when the preferred one is taken', async () => {
    const first = await startTestDaemon({ port: 0 });
    try {
      const taken = first.daemon.tcp?.port ?? 0;
      const second = await startTestDaemon({ port: taken });
      expect(second.daemon.tcp?.port).toBeGreaterThan(taken);
      await second.stop();
    } finally {
      await first.stop();
    }
  });

  it('types every stable error code', () => {
    expect(rpcCodeOf(new SwitchboardError('PANE_NOT_FOUND', 'x'))).toBe(-32002);
  });
});
