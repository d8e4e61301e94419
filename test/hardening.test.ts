import { describe, expect, it } from 'vitest';
import { connect } from '../src/index.js';
import { RawClient, errorOf, resultOf, startTestDaemon, useTestDaemon } from './support/daemon.js';
import { cleanEnv } from './support/cli.js';
import { openFdCount, sleep } from './support/shell.js';

const t = useTestDaemon();

describe('hardening', () => {
  it('drops output for a subscriber that stops reading, tells it once it reads again, and serves others meanwhile', async () => {
    const token = t.daemon.token;
    const flood = await RawClient.connect(t.daemon, 'socket');
    const pane = resultOf<{ pane_id: string }>(
      await flood.call(token, 'create_pane', { argv: ['bash', '-c', 'yes "a long line of flood output for the slow subscriber test"'], cwd: t.work }),
    );
    resultOf(await flood.call(token, 'subscribe', { pane_id: pane.pane_id, events: ['output'] }));
    flood.socket.pause();
    const other = await RawClient.connect(t.daemon, 'tcp');
    for (let i = 0; i < 50; i++) {
      expect(resultOf(await other.call(token, 'is_alive', { pane_id: pane.pane_id }))).toMatchObject({ alive: true });
      await sleep(20);
    }
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
    let after = openFdCount();
    for (let i = 0; i < 50 && after > before; i++) {
      await sleep(20);
      after = openFdCount();
    }
    expect(after).toBe(before);
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
