/**
 * Risks of issue 11: `log_export` had no bound on disk, and the dashboard's page key was taken from
 * the URL (the export link carried it, into history, logs and Referer headers).
 */
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/index.js';
import { useTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { tempDir } from '../support/shell.js';

const web = tempDir('sb-web-');
mkdirSync(path.join(web.dir, 'assets'));
writeFileSync(path.join(web.dir, 'index.html'), '<!doctype html><title>Switchboard</title>');
afterAll(() => web.cleanup());

const EXPORTS_MAX = 300_000;
const t = useTestDaemon({ exportsMaxBytes: EXPORTS_MAX, dashboard: { port: 0, webRoot: web.dir } });

describe('log_export', () => {
  it('stays within its disk budget: an export that does not fit is refused and leaves nothing behind', async () => {
    const client = await connect({ home: t.home, env: cleanEnv() });
    const { pane_id } = await client.createPane({ argv: ['bash', '-c', 'for i in $(seq 1 2000); do echo "line $i of a log that is exported again and again"; done; echo END; sleep 60'], cwd: t.work });
    await client.waitFor(pane_id, { pattern: '^END$', flags: 'm' });
    const dir = path.join(t.home, 'exports');
    const used = (): number => readdirSync(dir).reduce((n, f) => n + statSync(path.join(dir, f)).size, 0);
    let refusal: unknown;
    let written = 0;
    for (let i = 0; i < 10 && refusal === undefined; i++) {
      refusal = await client.request('log_export', { session_id: pane_id }).then(
        () => {
          written += 1;
          return undefined;
        },
        (err: unknown) => err,
      );
    }
    expect(refusal).toMatchObject({ code: 'LIMIT_EXCEEDED', message: expect.stringMatching(/the exports folder is full \(300000 bytes at most\): remove old exports from /) as unknown });
    expect(used()).toBeLessThanOrEqual(EXPORTS_MAX);
    expect(written).toBeGreaterThan(0);
    expect(readdirSync(dir)).toHaveLength(written);
    await client.remove(pane_id);
    client.close();
  });

  it('holds its budget over exports made at once: together they never pass it, and the ones that do not fit are refused whole', async () => {
    const dir = path.join(t.home, 'exports');
    rmSync(dir, { recursive: true, force: true });
    const client = await connect({ home: t.home, env: cleanEnv() });
    const { pane_id } = await client.createPane({ argv: ['bash', '-c', 'for i in $(seq 1 2000); do echo "line $i of a log that is exported many times at once"; done; echo END; sleep 60'], cwd: t.work });
    await client.waitFor(pane_id, { pattern: '^END$', flags: 'm' });
    // Each export measured the folder on its own before: all of them saw room for one, and together passed the budget.
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => client.request('log_export', { session_id: pane_id })));
    const used = readdirSync(dir).reduce((n, f) => n + statSync(path.join(dir, f)).size, 0);
    expect(used).toBeLessThanOrEqual(EXPORTS_MAX);
    const written = results.filter((r) => r.status === 'fulfilled').length;
    expect(written).toBeGreaterThan(0);
    const refusals = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as { code?: string }] : []));
    expect(refusals.every((e) => e.code === 'LIMIT_EXCEEDED')).toBe(true);
    expect(written).toBeLessThan(8);
    expect(readdirSync(dir)).toHaveLength(written);
    await client.remove(pane_id);
    client.close();
  });
});

describe('the dashboard\u2019s page key', () => {
  it('is taken from a header only, never from the URL', async () => {
    const base = `http://127.0.0.1:${String(t.daemon.dashboard?.port)}`;
    const res = await fetch(t.daemon.dashboardLoginUrl(), { redirect: 'manual' });
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const key = /key=([\w-]+)/.exec(res.headers.get('location') ?? '')?.[1] ?? '';
    expect((await fetch(`${base}/api/check`, { headers: { cookie, 'x-switchboard-key': key } })).status).toBe(204);
    const inUrl = await fetch(`${base}/api/check?key=${key}`, { headers: { cookie } });
    expect(inUrl.status).toBe(400);
    expect(await inUrl.text()).toMatch(/the page key goes in the x-switchboard-key header, never in the URL/);
    const pane = t.daemon.panes.create({ argv: ['true'], cwd: t.work });
    expect((await fetch(`${base}/api/sessions/${pane.id}/export?key=${key}`, { headers: { cookie } })).status).toBe(400);
    expect((await fetch(`${base}/api/sessions/${pane.id}/export`, { headers: { cookie, 'x-switchboard-key': key } })).status).toBe(200);
  });
});
