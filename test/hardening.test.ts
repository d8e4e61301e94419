import { describe, expect, it } from 'vitest';
import { connect } from '../src/index.js';
import { RawClient, errorOf, resultOf, startTestDaemon, useTestDaemon } from './support/daemon.js';
import { cleanEnv } from './support/cli.js';
import { openFdCount, sleep } from './support/shell.js';
import { until } from './support/processes.js';
import { OUTPUT_BACKLOG_LIMIT } from '../src/api/notification-sink.js';

const t = useTestDaemon();

describe('hardening', () => {
  it('drops output for a subscriber that stops reading, tells it once it reads again, and serves others meanwhile', async () => {
    const token = t.daemon.token;
    const flood = await RawClient.connect(t.daemon, 'socket');
    const pane = resultOf<{ pane_id: string }>(
      await flood.call(token, 'create_pane', { argv: ['bash', '-c', 'yes "a long line of flood output for the slow subscriber test"'], cwd: t.work }),
    );
    resultOf(await flood.call(token, 'subscribe', { pane_id: pane.pane_id, events: ['output'] }));
    // A second subscriber that keeps up tells how much the pane has written: the slow one stays
    // paused until far more than its backlog limit and the kernel's buffers could hold went by (a
    // state, not a time: under load `yes` writes less in a second than the limit).
    const watcher = await connect({ home: t.home, env: cleanEnv() });
    let written = 0;
    await watcher.subscribe({ paneId: pane.pane_id, events: ['output'] }, { output: (n) => (written = Math.max(written, n.offset + Buffer.byteLength(n.data))) });
    flood.socket.pause();
    const pausedAt = written;
    const other = await RawClient.connect(t.daemon, 'tcp');
    let answered = 0;
    await until(async () => {
      expect(resultOf(await other.call(token, 'is_alive', { pane_id: pane.pane_id }))).toMatchObject({ alive: true });
      answered++;
      return answered >= 50 && written - pausedAt > 4 * OUTPUT_BACKLOG_LIMIT;
    }, `4 MiB of output past the paused subscriber (${written - pausedAt} bytes so far)`);
    watcher.close();
    flood.socket.resume();
    // In arrival order: contiguous output, then one overflow notice, then output again from at or
    // after the offset the notice names.
    type Note = { method?: string; params: { offset: number; data: string; dropped_bytes: number; resume_offset: number; pane_id: string } };
    let expected: number | undefined;
    let overflow: Note['params'] | undefined;
    let resumedAt: number | undefined;
    while (resumedAt === undefined) {
      const m = (await flood.next(30_000)) as Note;
      if (m.method === 'overflow') {
        expect(overflow).toBeUndefined();
        overflow = m.params;
      } else if (m.method === 'output') {
        if (overflow) resumedAt = m.params.offset;
        else {
          if (expected !== undefined) expect(m.params.offset).toBe(expected);
          expected = m.params.offset + Buffer.byteLength(m.params.data);
        }
      }
    }
    expect(overflow?.pane_id).toBe(pane.pane_id);
    expect(overflow?.dropped_bytes).toBeGreaterThan(0);
    expect(resumedAt).toBeGreaterThanOrEqual(overflow?.resume_offset ?? Infinity);
    flood.close();
    resultOf(await other.call(token, 'remove', { pane_id: pane.pane_id }));
    other.close();
  });

  it('releases descriptors of closed connections', async () => {
    const warm = await RawClient.connect(t.daemon, 'tcp');
    resultOf(await warm.call(t.daemon.token, 'ping'));
    warm.close();
    await sleep(100);
    const before = openFdCount();
    for (let i = 0; i < 40; i++) {
      const c = await RawClient.connect(t.daemon, i % 2 ? 'tcp' : 'socket');
      resultOf(await c.call(t.daemon.token, 'ping'));
      c.close();
    }
    await until(() => openFdCount() <= before, 'the connections\' descriptors to be closed');
    expect(openFdCount()).toBeLessThanOrEqual(before);
  });

  it('gives TIMEOUT when a reply does not come in time', async () => {
    const client = await connect({ home: t.home, env: cleanEnv() });
    const { pane_id } = await client.createPane({ argv: ['sleep', '30'], cwd: t.work });
    const err = await client
      .request('wait_for', { pane_id, pattern: 'never', timeout_ms: 10_000 }, { timeoutMs: 50 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TIMEOUT', message: 'wait_for got no reply within 50 ms' });
    expect((await client.ping()).pong).toBe(true);
    await client.remove(pane_id);
    client.close();
  });
});

describe('shutdown', () => {
  it('refuses new panes with SHUTTING_DOWN while it ends the old ones', async () => {
    const own = await startTestDaemon({ paneDefaults: { killGraceMs: 1_500 } });
    const c = await RawClient.connect(own.daemon, 'socket');
    const token = own.daemon.token;
    // A pane that ignores HUP and TERM keeps the shutdown busy for the grace period.
    const stubborn = resultOf<{ pane_id: string }>(
      await c.call(token, 'create_pane', { argv: ['bash', '-c', 'trap "" HUP TERM; echo ready; while true; do sleep 0.05; done'], cwd: t.work }),
    );
    resultOf(await c.call(token, 'wait_for', { pane_id: stubborn.pane_id, pattern: 'ready' }));
    expect(resultOf(await c.call(token, 'shutdown'))).toEqual({ success: true });
    await sleep(100);
    const late = await RawClient.connect(own.daemon, 'tcp').catch(() => undefined);
    if (late) {
      const refused = errorOf(await late.call(token, 'create_pane', { argv: ['true'], cwd: t.work }));
      expect(refused).toMatchObject({ code: -32008, data: { code: 'SHUTTING_DOWN' } });
      late.close();
    }
    await c.closed;
    await own.stop();
    expect(late).toBeDefined();
  });
});

describe('review findings', () => {
  it('drops a client that sends garbage without authenticating and never reads', async () => {
    const own = await startTestDaemon();
    try {
      const flooder = await RawClient.connect(own.daemon, 'tcp');
      flooder.socket.pause();
      flooder.send('x\n'.repeat(1_000_000));
      await sleep(1_000);
      // Reading again shows what the daemon did meanwhile: a daemon that only paused would now
      // answer all million lines and keep the connection; one that gave up has closed it.
      flooder.socket.resume();
      await flooder.closed;
      expect(flooder.isOpen).toBe(false);
      const fine = await RawClient.connect(own.daemon, 'socket');
      expect(resultOf(await fine.call(own.daemon.token, 'ping'))).toMatchObject({ pong: true });
      fine.close();
    } finally {
      await own.stop();
    }
  });

  it('stops reading requests from a client that does not read its replies, and answers all once it does', async () => {
    const c = await RawClient.connect(t.daemon, 'socket');
    resultOf(await c.call(t.daemon.token, 'ping'));
    c.socket.pause();
    const line = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'list', params: { token: t.daemon.token } })}\n`;
    let sent = 0;
    // Write until the daemon has stopped taking requests: our own send buffer fills up.
    while (c.socket.writableLength < 4 * 1024 * 1024 && sent < 2_000_000) {
      c.socket.write(line);
      sent += 1;
      if (sent % 2000 === 0) await sleep(5);
    }
    expect(c.socket.writableLength).toBeGreaterThanOrEqual(4 * 1024 * 1024);
    expect(c.isOpen).toBe(true);
    c.socket.resume();
    let answered = 0;
    while (answered < sent) {
      await c.waitFor((m) => (m as { id?: number }).id === 1, 60_000);
      answered += 1;
    }
    expect(answered).toBe(sent);
    c.close();
  });

  it('lets go of connections refused over the limit, even when the client neither reads nor closes', async () => {
    const own = await startTestDaemon({ maxConnections: 1 });
    try {
      const first = await RawClient.connect(own.daemon, 'tcp');
      resultOf(await first.call(own.daemon.token, 'ping'));
      const refused = await Promise.all(Array.from({ length: 5 }, () => RawClient.connect(own.daemon, 'tcp')));
      for (const r of refused) r.socket.pause();
      await sleep(1_500);
      // A paused socket cannot see the close; reading again shows the daemon already let go.
      for (const r of refused) r.socket.resume();
      await Promise.all(refused.map((r) => r.closed));
      expect(refused.every((r) => !r.isOpen)).toBe(true);
      first.close();
    } finally {
      await own.stop();
    }
  });

  it('counts a client as authenticated from its token, not from its first reply', async () => {
    const own = await startTestDaemon({ limits: { unauthenticatedTimeoutMs: 200 } });
    try {
      const c = await RawClient.connect(own.daemon, 'socket');
      const pane = resultOf<{ pane_id: string }>(await c.call(own.daemon.token, 'create_pane', { argv: ['sleep', '30'], cwd: t.work }));
      // A new connection whose first request takes longer than the authentication window.
      const slow = await RawClient.connect(own.daemon, 'socket');
      const waited = resultOf<{ reason: string }>(await slow.call(own.daemon.token, 'wait_for', { pane_id: pane.pane_id, pattern: 'never', timeout_ms: 600 }));
      expect(waited.reason).toBe('timeout');
      expect(slow.isOpen).toBe(true);
      slow.close();
      c.close();
    } finally {
      await own.stop();
    }
  });

  it('does not time out a half-sent line while the daemon itself is not reading', async () => {
    const own = await startTestDaemon({ limits: { partialLineTimeoutMs: 300, maxInFlight: 4 } });
    try {
      const c = await RawClient.connect(own.daemon, 'tcp');
      const token = own.daemon.token;
      const pane = resultOf<{ pane_id: string }>(await c.call(token, 'create_pane', { argv: ['sleep', '30'], cwd: t.work }));
      const waits = Array.from({ length: 4 }, (_, i) => ({ jsonrpc: '2.0', id: 100 + i, method: 'wait_for', params: { token, pane_id: pane.pane_id, pattern: 'never', timeout_ms: 900 } }));
      const ping = JSON.stringify({ jsonrpc: '2.0', id: 200, method: 'ping', params: { token } });
      c.send(`${waits.map((w) => JSON.stringify(w)).join('\n')}\n${ping.slice(0, 20)}`);
      await sleep(600);
      expect(c.isOpen).toBe(true);
      c.send(`${ping.slice(20)}\n`);
      expect(resultOf(await c.waitFor((m) => (m as { id?: number }).id === 200, 10_000))).toMatchObject({ pong: true });
      c.close();
    } finally {
      await own.stop();
    }
  });

  it('answers a client that half-closes after sending', async () => {
    const c = await RawClient.connect(t.daemon, 'tcp');
    const token = t.daemon.token;
    const pane = resultOf<{ pane_id: string }>(await c.call(token, 'create_pane', { argv: ['sleep', '30'], cwd: t.work }));
    const lines = [
      { jsonrpc: '2.0', id: 'a', method: 'ping', params: { token } },
      { jsonrpc: '2.0', id: 'b', method: 'wait_for', params: { token, pane_id: pane.pane_id, idle_ms: 300 } },
    ];
    c.socket.end(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    expect(resultOf(await c.waitFor((m) => (m as { id?: string }).id === 'a'))).toMatchObject({ pong: true });
    expect(resultOf(await c.waitFor((m) => (m as { id?: string }).id === 'b'))).toMatchObject({ matched: true, reason: 'idle' });
    await c.closed;
    const other = await RawClient.connect(t.daemon, 'tcp');
    resultOf(await other.call(token, 'remove', { pane_id: pane.pane_id }));
    other.close();
  });

  it('replays a long history to the library client after the subscribe reply', async () => {
    const client = await connect({ home: t.home, env: cleanEnv() });
    const { pane_id } = await client.createPane({ argv: ['bash', '-c', 'for i in $(seq 1 3000); do echo "history line $i with some padding text"; done; echo END; sleep 30'], cwd: t.work });
    await client.waitFor(pane_id, { pattern: '^END$', flags: 'm' });
    let text = '';
    let firstOffset = -1;
    await client.subscribe({ paneId: pane_id, replay: true }, {
      output: (o) => {
        if (firstOffset < 0) firstOffset = o.offset;
        text += o.data;
      },
    });
    await until(() => text.includes('END'), 'END in the output');
    expect(text.length).toBeGreaterThan(100_000);
    expect(text).toContain('history line 3000 with');
    expect(firstOffset).toBeGreaterThanOrEqual(0);
    await client.remove(pane_id);
    client.close();
  });

  it('keeps output offsets exact when characters are split across reads', async () => {
    const client = await connect({ home: t.home, env: cleanEnv() });
    const { pane_id } = await client.createPane({ argv: ['bash', '-c', 'read go; for i in $(seq 1 2000); do printf "€😀漢字€"; done; echo; echo DONE; sleep 30'], cwd: t.work });
    const pieces: { offset: number; data: string }[] = [];
    await client.subscribe({ paneId: pane_id }, { output: (o) => pieces.push({ offset: o.offset, data: o.data }) });
    await client.sendText(pane_id, 'go', { addNewline: true });
    await client.waitFor(pane_id, { pattern: '^DONE$', flags: 'm' });
    await until(() => pieces.map((p) => p.data).join('').includes('DONE'), 'DONE in the output');
    for (let i = 1; i < pieces.length; i++) {
      const prev = pieces[i - 1] as { offset: number; data: string };
      expect((pieces[i] as { offset: number }).offset).toBe(prev.offset + Buffer.byteLength(prev.data));
    }
    const all = pieces.map((p) => p.data).join('');
    expect(all).not.toContain('\uFFFD');
    expect(all.split('€😀漢字€').length - 1).toBe(2000);
    await client.remove(pane_id);
    client.close();
  });

  it('counts a pattern on the final screen of an exited pane as matched, even when waiting for stillness', async () => {
    const client = await connect({ home: t.home, env: cleanEnv() });
    const { pane_id } = await client.createPane({ argv: ['bash', '-c', 'sleep 0.2; echo BUILD_OK'], cwd: t.work });
    expect(await client.waitFor(pane_id, { pattern: 'BUILD_OK', idleMs: 500 })).toMatchObject({ matched: true, reason: 'matched' });
    expect(await client.waitFor(pane_id, { pattern: 'BUILD_OK', idleMs: 500 })).toMatchObject({ matched: true, reason: 'matched' });
    await client.remove(pane_id);
    client.close();
  });

  it('refuses input to a program that does not read it, instead of queueing it without end', async () => {
    const client = await connect({ home: t.home, env: cleanEnv() });
    const { pane_id } = await client.createPane({ argv: ['sleep', '30'], cwd: t.work });
    const chunk = 'x'.repeat(1_000_000);
    let err: unknown;
    for (let i = 0; i < 10 && err === undefined; i++) {
      err = await client.sendText(pane_id, chunk).then(() => undefined, (e: unknown) => e);
    }
    expect(err).toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect((err as Error).message).toMatch(/is not reading its input/);
    await client.remove(pane_id);
    client.close();
  });

  it('refuses a home that others can enter and that holds other files, and a socket path that is not a socket', async () => {
    const { mkdirSync, writeFileSync, chmodSync, existsSync, statSync } = await import('node:fs');
    const path = await import('node:path');
    const { Daemon } = await import('../src/daemon/index.js');
    const shared = path.join(t.work, 'shared-home');
    mkdirSync(shared);
    chmodSync(shared, 0o755);
    writeFileSync(path.join(shared, 'notes.txt'), 'mine');
    await expect(Daemon.start({ home: shared, port: 0 })).rejects.toThrow(/refusing to use .*shared-home: other users can enter it \(mode 755\)/);
    expect(statSync(shared).mode & 0o777).toBe(0o755);

    const stale = path.join(t.work, 'stale-home');
    mkdirSync(stale);
    chmodSync(stale, 0o755);
    writeFileSync(path.join(stale, 'daemon.log'), 'old log');
    const ok = await Daemon.start({ home: stale, port: 0 });
    expect(statSync(stale).mode & 0o777).toBe(0o700);
    await ok.close();

    const home = path.join(t.work, 'sock-home');
    const notASocket = path.join(t.work, 'not-a-socket');
    writeFileSync(notASocket, 'precious');
    await expect(Daemon.start({ home, port: 0, socket: notASocket })).rejects.toThrow(/exists and is not a socket/);
    expect(existsSync(notASocket)).toBe(true);
  });
});
