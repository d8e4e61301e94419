/**
 * Item 2 of issue 21: the HTTP API's plain JSON answers had no unread bound. Ten clients asking for a
 * run's events (`?events=true&limit=10000`, 64.9 MiB each) that never read took the daemon from 455
 * to 2,485 MiB and held it there. Now every answer is streamed with backpressure, a page stops at a
 * byte budget and says where to go on, a client that leaves too much unread (an SSE stream) or reads
 * nothing for the write timeout is dropped, counted and logged, and the owner is answered meanwhile.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeBackend } from '../../src/runs/backends/fake-backend.js';
import { startTestDaemon } from '../support/daemon.js';
import { apiClient } from '../support/sse.js';
import { until } from '../support/processes.js';

const MiB = 1024 * 1024;
/** What the daemon is configured with: the byte budget of a page is the default (4 MiB). */
// Long enough that a reader in this same busy process is never taken for a stalled one.
const WRITE_TIMEOUT_MS = 5_000;
const PAGE_BYTES = 4 * MiB;
/** About 16 KiB per event on the wire (the text twice: `data` and `compat`): about 12.5 MiB in all. */
const EVENTS = 800;
const TEXT = 'x'.repeat(8 * 1024);

type Started = Awaited<ReturnType<typeof startTestDaemon>>;
let started: Started | undefined;
const need = (): Started => {
  if (!started) throw new Error('not started');
  return started;
};
const runId = 'r-answer-bounds';

beforeAll(async () => {
  started = await startTestDaemon({ dashboard: { port: 0, answers: { writeTimeoutMs: WRITE_TIMEOUT_MS } }, bridge: { backends: [new FakeBackend()] } });
  const ledger = started.daemon.bridge?.ledger;
  if (!ledger) throw new Error('the bridge did not start');
  ledger.createRun({ id: runId, backend: 'fake', mode: 'stdio', prompt: 'p', cwd: started.home, policy: 'default', limits: {}, schema_version: 'v2', parent: null, created_at: Date.now() });
  for (let i = 0; i < EVENTS; i++) ledger.append(runId, { type: 'token', ts: Date.now(), data: { text: `${i} ${TEXT}` }, compat: { text: `${i} ${TEXT}`, status: 'streaming', is_error: false } });
  await ledger.flush();
});

afterAll(async () => {
  await started?.stop();
});

const base = (): string => `http://127.0.0.1:${need().daemon.dashboard?.port ?? 0}`;
const server = () => {
  const s = need().daemon.dashboardServer;
  if (!s) throw new Error('no dashboard');
  return s;
};

/** A client that sends `requests` (pipelined, all at once) and never reads a byte of the answers. */
function nonReader(requests: string[]): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(need().daemon.dashboard?.port ?? 0, '127.0.0.1', () => {
      socket.write(requests.join(''));
      resolve(socket);
    });
    socket.pause();
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}

function get(path: string, extra = ''): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${need().daemon.dashboard?.port ?? 0}\r\nAuthorization: Bearer ${need().daemon.token}\r\n${extra}\r\n`;
}

describe('every HTTP answer is bounded', () => {
  it('stops a page of events at its byte budget and says where the next one starts', async () => {
    const api = apiClient(base(), need().daemon.token);
    const seen: number[] = [];
    let after = 0;
    let pages = 0;
    for (;;) {
      const res = await fetch(`${base()}/api/v2/agent/runs/${runId}?events=true&limit=10000&after=${after}`, { headers: { Authorization: `Bearer ${api.token}` } });
      expect(res.status).toBe(200);
      const text = await res.text();
      // A page holds at most its budget of events (the run and the cursor around them are small).
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(PAGE_BYTES + 64 * 1024);
      const body = JSON.parse(text) as { events: { seq: number }[]; next_after: number | null };
      pages += 1;
      seen.push(...body.events.map((e) => e.seq));
      if (body.next_after === null) break;
      expect(body.next_after).toBe(body.events.at(-1)?.seq);
      after = body.next_after;
    }
    // 12.5 MiB of events in pages of 4 MiB: every event once, in order, none left out.
    expect(pages).toBeGreaterThanOrEqual(4);
    expect(seen).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1));
  });

  it('drops clients that never read their answers, and answers the owner meanwhile', async () => {
    const before = server().answerDrops.stalled;
    // Ten clients, each asking for 16 pages (64 MiB) at once and reading none of it.
    const pages = Array.from({ length: 16 }, () => get(`/api/v2/agent/runs/${runId}?events=true&limit=10000`));
    const clients = await Promise.all(Array.from({ length: 10 }, () => nonReader(pages)));
    try {
      await until(() => server().answerDrops.stalled >= before + 10, 'the ten non-reading clients dropped by the write timeout');
      await until(() => server().connectionCounts.all <= 1, 'their connections closed by the daemon');
      const owner = await fetch(`${base()}/api/v2/agent/backends`, { headers: { Authorization: `Bearer ${need().daemon.token}` } });
      expect(owner.status).toBe(200);
      expect(((await owner.json()) as { backends: unknown[] }).backends.length).toBeGreaterThan(0);
    } finally {
      for (const c of clients) c.destroy();
    }
  });

  it('drops an SSE reader that leaves more than the bound unread instead of holding it', async () => {
    const before = server().answerDrops.unread;
    // The stream replays 12.5 MiB of recorded events at once; the reader takes none of it.
    const client = await nonReader([get(`/api/v2/agent/stream?run_id=${runId}`, 'Accept: text/event-stream\r\n')]);
    try {
      await until(() => server().answerDrops.unread >= before + 1, 'the SSE reader dropped at the unread bound');
      await until(() => server().connectionCounts.all <= 1, 'its connection closed by the daemon');
    } finally {
      client.destroy();
    }
  });
});
