/**
 * Issue 21, item 3: run lists carried every run's whole prompt (300 runs of 1 MB prompts: a 300 MiB
 * `run_list`, and `switchboard runs` failed). Lists now carry a preview (the first KiB, cut on a
 * character boundary, with the prompt's size in bytes and whether it was cut), the whole prompt
 * only from the run itself; pages of runs and events stop at a byte budget and say where to go on;
 * and queued runs are capped per caller and by the bytes of prompt they hold (LIMIT_EXCEEDED).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import { FakeBackend } from '../../src/runs/backends/fake-backend.js';
import { RawClient, resultOf, startTestDaemon } from '../support/daemon.js';
import { apiClient } from '../support/sse.js';
import { cleanEnv } from '../support/cli.js';
import { tempDir } from '../support/shell.js';
import { until } from '../support/processes.js';

const RUNS = 40;
const PREVIEW_BYTES = 1024;
const MiB = 1024 * 1024;
const scratch = tempDir('sb-run-previews-');
const stops: (() => Promise<void>)[] = [];
const clients: (SwitchboardClient | RawClient)[] = [];

afterAll(async () => {
  for (const c of clients) c.close();
  for (const stop of stops) await stop();
  scratch.cleanup();
});

async function daemonWith(name: string, policy: string): Promise<{ started: Awaited<ReturnType<typeof startTestDaemon>>; client: SwitchboardClient; work: string }> {
  const home = path.join(scratch.dir, name);
  const work = path.join(scratch.dir, `${name}-work`);
  mkdirSync(work, { recursive: true });
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(home, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(scratch.dir)}]\n${policy}`);
  const started = await startTestDaemon({ home, dashboard: { port: 0 }, bridge: { backends: [new FakeBackend()] } });
  stops.push(started.stop);
  const client = await connect({ home, env: cleanEnv() });
  clients.push(client);
  return { started, client, work };
}

/** About 1 MB of prompt in three-byte characters, so the first KiB ends inside one. */
const bigPrompt = (i: number): string => `hello ${String(i).padStart(3, '0')} ${'€'.repeat(333_330)}`;

describe('run lists with previews, pages bounded by bytes, queue caps', () => {
  it(`lists ${RUNS} runs of 1 MB prompts in a small answer; the run itself has the whole prompt`, { timeout: 120_000 }, async () => {
    const { started, client, work } = await daemonWith('previews', 'limits:\n  concurrency: 4\n');
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i++) ids.push((await client.runSubmit({ backend: 'fake', prompt: bigPrompt(i), cwd: work })).run.id);
    for (const id of ids) await until(async () => (await client.runGet(id)).run.status === 'completed', `run ${id} completed`);

    // The answer as bytes on the wire, read by a client that takes up to 64 MiB a line.
    const raw = await RawClient.connect(started.daemon, 'socket');
    clients.push(raw);
    const response = await raw.call(started.daemon.token, 'run_list', { limit: 1000 });
    const bytes = Buffer.byteLength(JSON.stringify(response));
    const { runs } = resultOf<{ runs: { id: string; prompt: string; prompt_bytes: number; prompt_truncated: boolean }[]; next_before: number | null }>(response);
    expect(runs).toHaveLength(RUNS);
    expect(bytes).toBeLessThan(RUNS * 3 * 1024);
    for (const r of runs) {
      const whole = bigPrompt(Number(/hello (\d+)/.exec(r.prompt)?.[1]));
      expect(r.prompt_bytes).toBe(Buffer.byteLength(whole));
      expect(r.prompt_truncated).toBe(true);
      expect(Buffer.byteLength(r.prompt)).toBeLessThanOrEqual(PREVIEW_BYTES);
      expect(Buffer.byteLength(r.prompt)).toBeGreaterThan(PREVIEW_BYTES - 3);
      expect(r.prompt).not.toContain('\ufffd');
      expect(whole.startsWith(r.prompt)).toBe(true);
    }
    const first = runs[0] as (typeof runs)[number];
    const got = (await client.runGet(first.id)).run as { prompt: string; prompt_bytes: number; prompt_truncated: boolean };
    expect(got.prompt).toBe(bigPrompt(Number(/hello (\d+)/.exec(first.prompt)?.[1])));
    expect(got).toMatchObject({ prompt_bytes: first.prompt_bytes, prompt_truncated: false });

    // The HTTP API's list is the same page.
    const port = started.daemon.dashboard?.port ?? 0;
    const http = await apiClient(`http://127.0.0.1:${port}`, started.daemon.token).call('GET', '/api/v2/agent/runs?limit=1000');
    expect(http.status).toBe(200);
    expect(Buffer.byteLength(JSON.stringify(http.body))).toBeLessThan(RUNS * 3 * 1024);
    expect((http.body as { runs: { prompt_truncated: boolean }[] }).runs.every((r) => r.prompt_truncated)).toBe(true);
  });

  it('stops a page of events at the byte budget and says where to go on', { timeout: 120_000 }, async () => {
    const { client, work } = await daemonWith('event-pages', 'limits:\n  concurrency: 4\n');
    // 40 replies of 200,000 characters: 8 MB of events, past one page's 4 MiB.
    const { run } = await client.runSubmit({ backend: 'fake', prompt: 'chunks 40x200000', cwd: work });
    await until(async () => (await client.runGet(run.id)).run.status === 'completed', 'the run completed');
    const last = (await client.runGet(run.id)).run.last_seq;
    const pages: number[] = [];
    let after = 0;
    let seen = 0;
    for (;;) {
      const page = (await client.runEvents(run.id, { after, limit: 10_000 })) as { events: { seq: number }[]; next_after: number | null };
      pages.push(Buffer.byteLength(JSON.stringify(page.events)));
      seen += page.events.length;
      if (page.next_after === null) break;
      expect(page.next_after).toBe(page.events.at(-1)?.seq);
      after = page.next_after;
    }
    expect(seen).toBe(last);
    expect(pages.length).toBeGreaterThan(1);
    for (const size of pages) expect(size).toBeLessThanOrEqual(4 * MiB + 300_000);
  });

  it('caps queued runs per caller (a pane token below the owner) and the bytes of prompt the queue holds: LIMIT_EXCEEDED', { timeout: 120_000 }, async () => {
    const { started, client: owner, work } = await daemonWith('caps', 'limits:\n  concurrency: 1\nqueue:\n  max_per_caller: 3\n  max_per_owner: 4\n  max_prompt_bytes: 3000000\n');
    const { run: blocker } = await owner.runSubmit({ backend: 'fake', prompt: 'silent', cwd: work });
    await until(async () => (await owner.runGet(blocker.id)).run.status === 'running', 'the first run holds the only place');
    const { pane_id: paneId } = await owner.createPane({ argv: ['sleep', '600'], cwd: work });
    const pane = await connect({ socketPath: started.daemon.socketPath as string, token: started.daemon.tokens.issue(paneId, ['read', 'create']), env: {} });
    clients.push(pane);
    const codeOf = (call: Promise<unknown>): Promise<string> => call.then(() => 'ok', (err: unknown) => String((err as { code?: unknown }).code));

    for (let i = 0; i < 3; i++) expect(await codeOf(pane.runSubmit({ backend: 'fake', prompt: `hello ${i}`, cwd: work }))).toBe('ok');
    const refused = await pane.runSubmit({ backend: 'fake', prompt: 'hello 3', cwd: work }).catch((err: unknown) => err as { code: string; message: string });
    expect(refused).toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect((refused as { message: string }).message).toMatch(/queue/);
    // The owner has a higher cap of its own: the pane's runs do not count against it.
    for (let i = 0; i < 3; i++) expect(await codeOf(owner.runSubmit({ backend: 'fake', prompt: `hello ${i} ${'x'.repeat(900_000)}`, cwd: work }))).toBe('ok');
    // Three prompts of 900 KB wait; one more of 1 MB would hold more than 3,000,000 bytes of prompt in the queue.
    expect(await codeOf(owner.runSubmit({ backend: 'fake', prompt: `hello 4 ${'x'.repeat(999_990)}`, cwd: work }))).toBe('LIMIT_EXCEEDED');
    expect(await codeOf(owner.runSubmit({ backend: 'fake', prompt: 'hello 5', cwd: work }))).toBe('ok');
    expect(await codeOf(owner.runSubmit({ backend: 'fake', prompt: 'hello 6', cwd: work }))).toBe('LIMIT_EXCEEDED');
    // Once the line moves, there is room again.
    await owner.runCancel(blocker.id);
    await until(async () => (await owner.runList({ status: 'queued' })).runs.length === 0, 'the queue emptied');
    expect(await codeOf(pane.runSubmit({ backend: 'fake', prompt: 'hello again', cwd: work }))).toBe('ok');
    await owner.kill(paneId);
  });
});
