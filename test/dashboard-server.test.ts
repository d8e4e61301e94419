/**
 * The dashboard's server with a real daemon and real shells: who gets in (one-time login link,
 * cookie, Bearer token), Host and Origin checks on requests and WebSocket upgrades, JSON-RPC over
 * /ws, a pane's terminal over /ws/pane/<id> (typing, output, resize, bad frames), and export.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useTestDaemon } from './support/daemon.js';
import { readRuntimeFile } from '../src/daemon/index.js';
import { runCli } from './support/cli.js';
import { BASH_ARGV, BASH_ENV, tempDir } from './support/shell.js';
import { until } from './support/processes.js';

// A stand-in web root, so the static part is tested without building the app.
const web = tempDir('sb-web-');
mkdirSync(path.join(web.dir, 'assets'));
writeFileSync(path.join(web.dir, 'index.html'), '<!doctype html><title>Switchboard</title>');
writeFileSync(path.join(web.dir, 'assets', 'app-abc123.js'), 'console.log(1)');

const t = useTestDaemon({ dashboard: { port: 0, webRoot: web.dir } });
afterAll(() => web.cleanup());

const base = (): string => `http://127.0.0.1:${String(t.daemon.dashboard?.port)}`;

/** Logs in as a browser does: the cookie, and the page key from the redirect's fragment. */
async function login(): Promise<{ cookie: string; key: string }> {
  const res = await fetch(t.daemon.dashboardLoginUrl(), { redirect: 'manual' });
  expect(res.status).toBe(302);
  const cookie = res.headers.get('set-cookie') ?? '';
  expect(cookie).toMatch(/^sb_session=[\w-]+; HttpOnly; SameSite=Strict; Path=\//);
  const key = /^\/#key=([\w-]+)$/.exec(res.headers.get('location') ?? '')?.[1] ?? '';
  expect(key).not.toBe('');
  return { cookie: cookie.split(';')[0] ?? '', key };
}

/** Opens a socket; `onMessage` is attached before it opens, since the first frames may come with the handshake. */
function openSocket(pathname: string, headers: Record<string, string>, onMessage?: (data: WebSocket.RawData, isBinary: boolean) => void, key?: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${String(t.daemon.dashboard?.port)}${pathname}`, key === undefined ? [] : ['switchboard', `sb-key.${key}`], { headers });
    if (onMessage) ws.on('message', onMessage);
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${String(res.statusCode)}`)));
    ws.once('error', reject);
  });
}

/** A tiny JSON-RPC client over the dashboard's socket. */
function rpc(ws: WebSocket): { call: (method: string, params?: Record<string, unknown>) => Promise<{ result?: unknown; error?: { code: number; data: { code: string } } }>; notes: { method: string; params: Record<string, unknown> }[] } {
  let next = 1;
  const waiting = new Map<number, (m: unknown) => void>();
  const notes: { method: string; params: Record<string, unknown> }[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse((data as Buffer).toString('utf8')) as { id?: number; method?: string; params?: Record<string, unknown> };
    if (m.id !== undefined) waiting.get(m.id)?.(m);
    else if (m.method) notes.push({ method: m.method, params: m.params ?? {} });
  });
  return {
    notes,
    call: (method, params = {}) =>
      new Promise((resolve) => {
        const id = next++;
        waiting.set(id, resolve as (m: unknown) => void);
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      }),
  };
}

describe('dashboard server: access', () => {
  it('publishes its HTTP port in the runtime file and in `switchboard status`', async () => {
    const http = t.daemon.dashboard;
    expect(http?.port).toBeGreaterThan(0);
    expect(readRuntimeFile(t.home)?.http).toEqual(http);
    const status = await runCli(t.home, ['status']);
    expect(status.stdout, status.stderr).toContain(`HTTP API, MCP and dashboard: http://${http?.host ?? ''}:${http?.port ?? 0}`);
  });

  it('lets a browser in once per login link, by cookie, and keeps everyone else out', async () => {
    expect((await fetch(`${base()}/`)).status).toBe(401);
    const url = t.daemon.dashboardLoginUrl();
    const first = await fetch(url, { redirect: 'manual' });
    expect(first.status).toBe(302);
    expect(first.headers.get('location')).toMatch(/^\/#key=[\w-]{43}$/);
    // The link is good once.
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(401);
    expect((await fetch(`${base()}/login?code=made-up`, { redirect: 'manual' })).status).toBe(401);
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = await fetch(`${base()}/`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>Switchboard</title>');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect((await fetch(`${base()}/assets/app-abc123.js`, { headers: { cookie } })).headers.get('cache-control')).toContain('immutable');
    // A client-side route gets the app; a path out of the web root gets nothing of the disk.
    expect(await (await fetch(`${base()}/panes/1`, { headers: { cookie } })).text()).toContain('Switchboard');
    expect(await (await fetch(`${base()}/..%2f..%2fetc%2fpasswd`, { headers: { cookie } })).text()).not.toContain('root:');
    expect((await fetch(`${base()}/`, { headers: { cookie: 'sb_session=forged' } })).status).toBe(401);
    expect((await fetch(`${base()}/`, { headers: { authorization: `Bearer ${t.daemon.token}` } })).status).toBe(200);
    expect((await fetch(`${base()}/`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${base()}/`, { method: 'POST', headers: { cookie } })).status).toBe(405);
  });

  it('refuses a foreign Host (DNS rebinding) and a foreign Origin, on requests and upgrades', async () => {
    const { cookie, key } = await login();
    const port = String(t.daemon.dashboard?.port);
    const raw = (headers: Record<string, string>): Promise<number> =>
      new Promise((resolve, reject) => {
        import('node:http')
          .then(({ request }) => {
            const req = request({ host: '127.0.0.1', port, path: '/', headers: { cookie, ...headers } }, (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            });
            req.on('error', reject);
            req.end();
          })
          .catch(reject);
      });
    expect(await raw({ host: `evil.example:${port}` })).toBe(403);
    expect(await raw({ host: `localhost:${port}` })).toBe(200);
    expect(await raw({ origin: 'http://evil.example' })).toBe(403);
    await expect(openSocket('/ws', { cookie, origin: 'http://evil.example' }, undefined, key)).rejects.toThrow('HTTP 403');
    await expect(openSocket('/ws', { cookie }, undefined, key)).rejects.toThrow('HTTP 403');
    await expect(openSocket('/ws', { origin: base() }, undefined, key)).rejects.toThrow('HTTP 401');
    // The cookie alone is not enough: any server on 127.0.0.1 gets it (cookies ignore ports), never the key.
    await expect(openSocket('/ws', { cookie, origin: base() })).rejects.toThrow('HTTP 401');
    await expect(openSocket('/ws', { cookie, origin: base() }, undefined, 'wrong')).rejects.toThrow('HTTP 401');
    await expect(openSocket('/ws/pane/nope', { cookie, origin: base() }, undefined, key)).rejects.toThrow('HTTP 404');
    expect((await fetch(`${base()}/api/check`, { headers: { cookie } })).status).toBe(401);
    expect((await fetch(`${base()}/api/check`, { headers: { cookie, 'x-switchboard-key': key } })).status).toBe(204);
  });
});

describe('dashboard server: sockets', () => {
  it('answers JSON-RPC over /ws without a token, with the same errors, and survives bad frames', async () => {
    const { cookie, key } = await login();
    const ws = await openSocket('/ws', { cookie, origin: base() }, undefined, key);
    const { call } = rpc(ws);
    try {
      expect((await call('ping')).result).toMatchObject({ pong: true });
      ws.send('not json');
      ws.send(Buffer.from([1, 2, 3]));
      expect((await call('get_text', { pane_id: 'p00000000' })).error?.data.code).toBe('PANE_NOT_FOUND');
      expect((await call('answer_approval', { pane_id: 'x', decision: 'maybe' })).error?.data.code).toBe('INVALID_PARAMS');
      expect((await call('info')).result).toMatchObject({ transports: { dashboard: { port: t.daemon.dashboard?.port } } });
    } finally {
      ws.close();
    }
  });

  it('carries a pane terminal: replay, typing, live output, resize, exit', async () => {
    const { cookie, key } = await login();
    const control = await openSocket('/ws', { cookie, origin: base() }, undefined, key);
    const { call } = rpc(control);
    const created = (await call('create_pane', { argv: [...BASH_ARGV], env: BASH_ENV, cwd: t.work })).result as { pane_id: string };
    await call('send_text', { pane_id: created.pane_id, text: 'echo before-$((1+1))', add_newline: true });
    await call('wait_for', { pane_id: created.pane_id, pattern: 'before-2' });

    let output = '';
    const controls: { type: string }[] = [];
    const term = await openSocket(`/ws/pane/${created.pane_id}`, { cookie, origin: base() }, (data, isBinary) => {
      if (isBinary) output += (data as Buffer).toString('utf8');
      else controls.push(JSON.parse((data as Buffer).toString('utf8')) as { type: string });
    }, key);
    await until(() => output.includes('before-2'), 'the replay');
    term.send(Buffer.from('echo typed-$((20+1))\r'));
    await until(() => output.includes('typed-21'), 'typed input echoed back');
    term.send(JSON.stringify({ type: 'resize', cols: 100, rows: 33 }));
    term.send(JSON.stringify({ type: 'resize', cols: -1, rows: 33 }));
    term.send('{"type":"what"}');
    await until(() => controls.filter((c) => c.type === 'error').length >= 2, 'errors for bad frames');
    term.send(Buffer.from('stty size\r'));
    await until(() => output.includes('33 100'), 'the resize');
    // Input bytes go to the program as they are, UTF-8 or not (X10 mouse reports are not).
    term.send(Buffer.from('cat -v\r'));
    await new Promise((r) => setTimeout(r, 200));
    term.send(Buffer.from([0x41, 0xff, 0x42, 0x0d]));
    await until(() => output.includes('AM-^?B'), 'the raw byte, shown by cat -v');
    term.send(Buffer.from([0x04]));
    term.send(Buffer.from('exit\r'));
    await until(() => controls.some((c) => c.type === 'exit'), 'the exit');
    term.close();
    control.close();
  });

  it('exports a session log as JSONL', async () => {
    const { cookie, key } = await login();
    const control = await openSocket('/ws', { cookie, origin: base() }, undefined, key);
    const { call } = rpc(control);
    const created = (await call('create_pane', { argv: [...BASH_ARGV], env: BASH_ENV, cwd: t.work })).result as { pane_id: string };
    await call('send_text', { pane_id: created.pane_id, text: 'echo exported-$((2+2))', add_newline: true });
    await call('wait_for', { pane_id: created.pane_id, pattern: 'exported-4' });
    expect((await fetch(`${base()}/api/sessions/${created.pane_id}/export`, { headers: { cookie } })).status).toBe(401);
    const res = await fetch(`${base()}/api/sessions/${created.pane_id}/export`, { headers: { cookie, 'x-switchboard-key': key } });
    expect(res.headers.get('content-type')).toContain('ndjson');
    const lines = (await res.text()).trimEnd().split('\n').map((l) => JSON.parse(l) as { seq: number; msg: { content?: string } });
    expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
    expect(lines.map((l) => l.msg.content ?? '').join('')).toContain('exported-4');
    expect((await fetch(`${base()}/api/sessions/nope/export`, { headers: { cookie, 'x-switchboard-key': key } })).status).toBe(404);
    await call('kill', { pane_id: created.pane_id });
    control.close();
  });

  it('answers malformed requests and upgrades with 400 and keeps serving', async () => {
    const net = await import('node:net');
    const port = t.daemon.dashboard?.port ?? 0;
    const send = (text: string): Promise<string> =>
      new Promise((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
        let got = '';
        socket.on('data', (d: Buffer) => (got += d.toString('utf8')));
        socket.on('close', () => resolve(got));
        socket.on('error', () => resolve(got));
        setTimeout(() => socket.destroy(), 2_000);
      });
    expect(await send(`GET http://[ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)).toMatch(/^HTTP\/1.1 400/);
    const { cookie, key } = await login();
    expect((await fetch(`${base()}/api/sessions/%E0%A4%A/export`, { headers: { cookie, 'x-switchboard-key': key } })).status).toBe(400);
    // An upgrade refused, then the connection reset under the refusal: nothing escapes.
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET /ws HTTP/1.1\r\nHost: evil:1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`));
    socket.on('error', () => undefined);
    socket.once('data', () => socket.resetAndDestroy());
    await new Promise((r) => setTimeout(r, 200));
    expect((await fetch(`${base()}/api/check`, { headers: { cookie, 'x-switchboard-key': key } })).status).toBe(204);
  });

  it('gives a late browser the modes the program set, and the screen itself once the raw history is past its bound', async () => {
    const { cookie, key } = await login();
    const control = await openSocket('/ws', { cookie, origin: base() }, undefined, key);
    const { call } = rpc(control);
    const created = (await call('create_pane', { argv: [...BASH_ARGV], env: BASH_ENV, cwd: t.work })).result as { pane_id: string };
    await call('send_text', { pane_id: created.pane_id, text: "printf '\\e[?1hmodes-set\\n'", add_newline: true });
    await call('wait_for', { pane_id: created.pane_id, pattern: '^modes-set', flags: 'm' });
    const replay = async (): Promise<string> => {
      let output = '';
      const term = await openSocket(`/ws/pane/${created.pane_id}`, { cookie, origin: base() }, (data, isBinary) => {
        if (isBinary) output += (data as Buffer).toString('utf8');
      }, key);
      await until(() => output.includes('modes-set') || output.includes('last-line'), 'the replay');
      await new Promise((r) => setTimeout(r, 100));
      term.close();
      return output;
    };
    // Application cursor keys are on now: the replay ends by saying so, whatever came before.
    expect(await replay()).toMatch(/\x1b\[\?1h[^]*$/);
    // Past the raw history's bound, the screen is drawn as it is (no half sequence from the cut).
    await call('send_text', { pane_id: created.pane_id, text: 'head -c 400000 /dev/zero | tr "\\0" x; echo; echo last-line', add_newline: true });
    await call('wait_for', { pane_id: created.pane_id, pattern: '^last-line', flags: 'm' });
    const drawn = await replay();
    expect(drawn.startsWith('\x1b[0m\x1b[H\x1b[2J')).toBe(true);
    expect(drawn.length).toBeLessThan(64 * 1024);
    expect(drawn).toContain('last-line');
    await call('kill', { pane_id: created.pane_id });
    control.close();
  });

  it('paces a client that asks for flow control: no more than its window unacknowledged, then a repaint once it acknowledges', async () => {
    const { cookie, key } = await login();
    const control = await openSocket('/ws', { cookie, origin: base() }, undefined, key);
    const { call } = rpc(control);
    const created = (await call('create_pane', { argv: [...BASH_ARGV], env: BASH_ENV, cwd: t.work })).result as { pane_id: string };
    await call('wait_for', { pane_id: created.pane_id, idle_ms: 200 });
    let received = 0;
    let output = '';
    const controls: string[] = [];
    const term = await openSocket(`/ws/pane/${created.pane_id}`, { cookie, origin: base() }, (data, isBinary) => {
      if (isBinary) {
        received += (data as Buffer).length;
        output += (data as Buffer).toString('utf8');
      } else controls.push((JSON.parse((data as Buffer).toString('utf8')) as { type: string }).type);
    }, key);
    const window = 64 * 1024;
    term.send(JSON.stringify({ type: 'flow', window }));
    await new Promise((r) => setTimeout(r, 100));
    const before = received;
    // About 2 MB of output, with no acknowledgement: the server stops near the window.
    await call('send_text', { pane_id: created.pane_id, text: 'head -c 2000000 /dev/zero | tr "\\0" y; echo; echo flood-$((1+1))-done', add_newline: true });
    await call('wait_for', { pane_id: created.pane_id, pattern: '^flood-2-done', flags: 'm', timeout_ms: 30_000 });
    await new Promise((r) => setTimeout(r, 300));
    expect(received - before).toBeLessThan(window + 64 * 1024);
    expect(output).not.toContain('flood-2-done');
    // Acknowledged: the screen as it is now, after a reset.
    term.send(JSON.stringify({ type: 'ack', bytes: received }));
    await until(() => output.includes('flood-2-done'), 'the repaint after the ack');
    expect(controls).toContain('reset');
    term.close();
    await call('kill', { pane_id: created.pane_id });
    control.close();
  });
});
