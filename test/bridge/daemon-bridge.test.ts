/**
 * The agent bridge wired into a real daemon (in process, the scripted fake backend): the run_*
 * methods over JSON-RPC with the client library (submit, follow with no gap, replay equal to the
 * live stream, list, cancel), the scopes they need, the HTTP API on the dashboard's port with the
 * daemon's token and the dashboard's Host and Origin checks, and a daemon without the bridge
 * answering CONFLICT rather than failing. All of it twice: with the run ledger in SQLite and in
 * PostgreSQL (a real server, test/support/postgres-server.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { request as httpRequest } from 'node:http';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import { FakeBackend } from '../../src/runs/backends/fake-backend.js';
import type { RunEventInfo } from '../../src/protocol/methods.js';
import { apiClient } from '../support/sse.js';
import { startTestDaemon } from '../support/daemon.js';
import { tempDir } from '../support/shell.js';
import { runCli } from '../support/cli.js';
import { LEDGER_KINDS, useTestLedger } from '../support/test-ledger.js';

function rawGet(port: number, urlPath: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: urlPath, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Follows a run over JSON-RPC until its stream ends; resolves with every event. */
async function followRpc(c: SwitchboardClient, runId: string, after = 0): Promise<RunEventInfo[]> {
  const events: RunEventInfo[] = [];
  await new Promise<void>((resolve, reject) => {
    c.runSubscribe(runId, { after }, { run_event: (n) => events.push(n.event), run_stream_end: (n) => (n.reason === 'ended' ? resolve() : reject(new Error(n.message))) }).catch(reject);
  });
  return events;
}

// The same suite with the ledger in SQLite (the home's file) and in PostgreSQL (a real server): one bridge, either store.
describe.each(LEDGER_KINDS)('the agent bridge in the daemon (ledger: %s)', (kind) => {
  const testLedger = useTestLedger(kind);
  type Started = Awaited<ReturnType<typeof startTestDaemon>>;
  let started: Started | undefined;
  let client: SwitchboardClient | undefined;
  const scratch = tempDir('sb-daemon-bridge-');
  const work = path.join(scratch.dir, 'work');
  const home = path.join(scratch.dir, 'home');

  const need = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('not started');
    return v;
  };

  beforeAll(async () => {
    mkdirSync(work, { recursive: true });
    // The policy file sits in the home before the daemon starts: the sandbox is the scratch folder.
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileSync(path.join(home, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(scratch.dir)}]\nlimits:\n  concurrency: 2\n`);
    const ledger = await testLedger.daemonLedger();
    started = await startTestDaemon({ home, dashboard: { port: 0 }, bridge: { backends: [new FakeBackend()], ...(ledger ? { ledger } : {}) } });
    client = await connect({ home });
  });

  afterAll(async () => {
    client?.close();
    await started?.stop();
    scratch.cleanup();
  });

  it('runs over JSON-RPC: submit, follow live, replay equal to the live stream, list, get', { timeout: 30_000 }, async () => {
    const c = need(client);
    const { run } = await c.runSubmit({ backend: 'fake', prompt: 'tool please', cwd: work });
    expect(run).toMatchObject({ backend: 'fake', mode: 'stdio', schema_version: 'v2' });
    const live = await followRpc(c, run.id);
    expect(live.map((e) => e.seq)).toEqual(live.map((_, i) => i + 1));
    expect(new Set(live.map((e) => e.type))).toEqual(new Set(['state', 'input', 'decision', 'tool_call', 'tool_result', 'patch', 'token', 'done']));
    const replay = await c.runEvents(run.id);
    expect(replay.events).toEqual(live);
    expect(replay.run).toMatchObject({ id: run.id, status: 'completed', reason: 'finished' });
    // Resumed from the middle: exactly the rest.
    const rest = await followRpc(c, run.id, 3);
    expect(rest).toEqual(live.slice(3));
    // v1 negotiated from a client that speaks only v1.
    const v1 = await c.runEvents(run.id, { schemaVersion: 'v1' });
    expect(v1.schema_version).toBe('v1');
    expect(v1.events[0]).toMatchObject({ schema_version: 'v1', is_error: false });
    expect((await c.runList()).runs.map((r) => r.id)).toContain(run.id);
    expect((await c.runGet(run.id)).run.status).toBe('completed');
    const backends = await c.runBackends();
    expect(backends.backends.map((b) => b.name)).toEqual(['fake']);
  });

  it('switchboard run prints a reply streamed in many token events as the one text it is, its line ended once', { timeout: 30_000 }, async () => {
    const ran = await runCli(home, ['run', 'fake', 'pieces 5', '--cwd', work]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('p0 p1 p2 p3 p4 \n');
    const { runs } = await need(client).runList({ limit: 1 });
    const shown = await runCli(home, ['runs', runs[0]?.id ?? '']);
    expect(shown.stdout).toContain('\np0 p1 p2 p3 p4 \n');
  });

  it('cancels a run, refuses a folder outside the sandbox, and answers RUN_NOT_FOUND with -32015', { timeout: 30_000 }, async () => {
    const c = need(client);
    const { run } = await c.runSubmit({ backend: 'fake', prompt: 'silent', cwd: work });
    const ended = followRpc(c, run.id);
    const cancelled = await c.runCancel(run.id);
    expect(cancelled.run.status).toBe('cancelled');
    const events = await ended;
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { outcome: 'cancelled' } });
    await expect(c.runSubmit({ backend: 'fake', prompt: 'hello', cwd: path.dirname(scratch.dir) })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(c.runGet('run_nope')).rejects.toMatchObject({ code: 'RUN_NOT_FOUND', rpcErrorCode: -32015 });
    await expect(c.runSubmit({ backend: 'fake', prompt: 'hello', cwd: work, mode: 'sideways' as never })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
  });

  it("serves the HTTP API on the dashboard's port with the daemon's token, Host and Origin checks", { timeout: 30_000 }, async () => {
    const d = need(started).daemon;
    const where = need(d.dashboard);
    const base = `http://127.0.0.1:${where.port}`;
    const api = apiClient(base, d.token);
    const res = await api.call('POST', '/api/v2/agent/run', { backend: 'fake', prompt: 'hello', cwd: work });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const run = res.body as { id: string; stream_url: string };
    const stream = await api.stream(run.stream_url);
    expect(stream.frames.at(-1)?.event).toBe('done');
    // The same run over JSON-RPC: one ledger behind both surfaces.
    expect((await need(client).runEvents(run.id)).events.length).toBe(stream.frames.length);

    const wrongToken = await apiClient(base, 'not-the-token').call('GET', '/api/v2/agent/backends');
    expect(wrongToken).toMatchObject({ status: 401, body: { error: { code: 'INVALID_TOKEN' } } });
    // fetch will not send another Host: a raw request does (DNS rebinding names the server otherwise).
    const foreignHost = await rawGet(where.port, '/api/v2/agent/backends', { host: `evil.example:${where.port}`, authorization: `Bearer ${d.token}` });
    expect(foreignHost.status).toBe(403);
    expect(JSON.parse(foreignHost.body)).toMatchObject({ error: { code: 'FORBIDDEN' } });
    const foreignOrigin = await api.call('POST', '/api/v2/agent/run', { backend: 'fake', prompt: 'hello', cwd: work }, { Origin: 'http://evil.example' });
    expect(foreignOrigin).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
    expect(foreignOrigin.headers.get('access-control-allow-origin')).toBeNull();
    const ownOrigin = await api.call('GET', '/api/v2/agent/backends', undefined, { Origin: base });
    expect(ownOrigin.status).toBe(200);
    const unknown = await api.call('GET', '/api/v2/nothing');
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'METHOD_NOT_FOUND' } } });
    const doc = await api.call('GET', '/api/v2/openapi.json');
    expect((doc.body as { openapi: string }).openapi).toBe('3.1.0');
    // The dashboard's own API is still its own.
    expect((await api.call('GET', '/api/check')).status).toBe(204);
  });

  it("refuses run calls a pane's scoped token may not make", { timeout: 30_000 }, async () => {
    const d = need(started).daemon;
    const scoped = d.tokens.issue('pane-x', ['read']);
    const reader = await connect({ home, token: scoped });
    try {
      expect((await reader.runList()).runs.length).toBeGreaterThan(0);
      await expect(reader.runSubmit({ backend: 'fake', prompt: 'hello', cwd: work })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    } finally {
      reader.close();
    }
  });

  it('says where its ledger is, without a password', async () => {
    const info = await need(client).info();
    const where = (info.bridge as { ledger?: string }).ledger ?? '';
    if (kind === 'sqlite') expect(where).toBe(path.join(home, 'ledger.db'));
    else expect(where).toMatch(/^postgres:\/\/switchboard:\*\*\*@127\.0\.0\.1:\d+\/ledger_\d+$/);
  });
});

describe('a daemon without the bridge', () => {
  it('answers run calls with CONFLICT and the reason, and keeps serving', { timeout: 30_000 }, async () => {
    const off = await startTestDaemon({ bridge: false });
    const c = await connect({ home: off.home });
    try {
      await expect(c.runList()).rejects.toMatchObject({ code: 'CONFLICT' });
      expect((await c.info()).bridge).toMatchObject({ on: false });
      expect((await c.ping()).pong).toBe(true);
    } finally {
      c.close();
      await off.stop();
    }
  });
});
