/**
 * Issue 21, item 4: one read-only token could take every connection slot. 256 connections
 * authenticated with a pane's token locked the owner out of TCP and the local socket
 * (LIMIT_EXCEEDED), and 520 long requests with a pane's token filled the dashboard port's 512. Each scoped grant has a budget of its own now, and all scoped grants together
 * another, neither counted against the owner's: the owner always gets in.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/index.js';
import { FakeBackend } from '../../src/runs/backends/fake-backend.js';
import { MAX_HTTP_CONNECTIONS_PER_GRANT } from '../../src/surfaces/http/server.js';
import { DEFAULT_MAX_CONNECTIONS_PER_GRANT } from '../../src/surfaces/rpc/server.js';
import { RawClient, errorOf, resultOf, startTestDaemon, useTestDaemon, TRANSPORTS } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { tempDir } from '../support/shell.js';

// A small connection limit makes the lockout quick to reach; the budgets are the defaults.
const t = useTestDaemon({ maxConnections: 16 });

describe("a pane's token has a connection budget of its own", () => {
  it.each(TRANSPORTS)('over %s: a pane token fills only its own budget, and the owner still gets in', async (transport) => {
    const paneToken = t.daemon.tokens.issue('p-budget', ['read', 'ask']);
    const held: RawClient[] = [];
    try {
      // Past the daemon's whole limit (16) and up to the grant's own (32): all admitted.
      for (let i = 0; i < DEFAULT_MAX_CONNECTIONS_PER_GRANT; i++) {
        const client = await RawClient.connect(t.daemon, transport);
        held.push(client);
        expect(resultOf(await client.call(paneToken, 'ping'))).toMatchObject({ pong: true });
      }
      // One more of the same grant is refused with the stable code, saying whose budget it is.
      const extra = await RawClient.connect(t.daemon, transport);
      held.push(extra);
      const refused = errorOf(await extra.call(paneToken, 'ping'));
      expect(refused.data.code).toBe('LIMIT_EXCEEDED');
      expect(refused.message).toBe(`too many connections for the token of pane p-budget (limit ${DEFAULT_MAX_CONNECTIONS_PER_GRANT})`);
      // The owner is never locked out by them, on either transport.
      for (const ownerTransport of TRANSPORTS) {
        const owner = await RawClient.connect(t.daemon, ownerTransport);
        held.push(owner);
        expect(resultOf(await owner.call(t.daemon.token, 'ping'))).toMatchObject({ pong: true });
      }
    } finally {
      for (const client of held) client.close();
      t.daemon.tokens.revokePane('p-budget');
    }
  });
});

describe("a pane's token has a budget of its own on the dashboard's port", () => {
  const scratch = tempDir('sb-http-budget-');
  const home = path.join(scratch.dir, 'home');
  const web = path.join(scratch.dir, 'web');
  let started: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
  beforeAll(async () => {
    mkdirSync(home, { mode: 0o700 });
    mkdirSync(web);
    writeFileSync(path.join(web, 'index.html'), '<!doctype html><title>Switchboard</title>');
    writeFileSync(path.join(home, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(scratch.dir)}]\n`);
    started = await startTestDaemon({ home, dashboard: { port: 0, webRoot: web }, bridge: { backends: [new FakeBackend()] } });
  });
  afterAll(async () => {
    await started?.stop();
    scratch.cleanup();
  });

  /** Opens a run's event stream with `token` and resolves with the status once the headers arrive; the connection stays open. */
  function openStream(port: number, token: string, runId: string, held: http.ClientRequest[]): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: `/api/v2/agent/stream?run_id=${runId}`, headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      held.push(req);
    });
  }

  it('admits a pane token up to its budget of open streams, refuses the next with 429, and the owner still gets in', async () => {
    const daemon = started?.daemon;
    const port = daemon?.dashboard?.port;
    if (!daemon || port === undefined) throw new Error('not started');
    const owner = await connect({ home, env: cleanEnv() });
    const { run } = await owner.runSubmit({ backend: 'fake', prompt: 'silent', cwd: scratch.dir });
    const paneToken = daemon.tokens.issue('p-http-budget', ['read', 'ask']);
    const held: http.ClientRequest[] = [];
    try {
      for (let i = 0; i < MAX_HTTP_CONNECTIONS_PER_GRANT; i++) expect(await openStream(port, paneToken, run.id, held)).toBe(200);
      expect(await openStream(port, paneToken, run.id, held)).toBe(429);
      // The owner is never crowded out by a pane's connections.
      expect(await openStream(port, daemon.token, run.id, held)).toBe(200);
      const list = await fetch(`http://127.0.0.1:${port}/api/v2/agent/runs`, { headers: { authorization: `Bearer ${daemon.token}` } });
      expect(list.status).toBe(200);
    } finally {
      for (const req of held) req.destroy();
      await owner.runCancel(run.id);
      owner.close();
      daemon.tokens.revokePane('p-http-budget');
    }
  });
});
