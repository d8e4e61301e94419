/**
 * The agent bridge (seed 004): the Run Ledger's appends per second and append latency on one core
 * (SQLite, WAL, batched per turn of the event loop), memory per queued run, one run followed by 100
 * SSE subscribers, and POST /api/v2/agent/run to the first event with the scripted fake backend:
 * the bridge's own overhead. The real CLIs' first token, beside each CLI started directly, is
 * first-token.ts.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RunLedger } from '../src/ledger/run-ledger.js';
import { SqliteLedgerStore } from '../src/ledger/sqlite-store.js';
import { parseGovernancePolicy } from '../src/governance/policy-file.js';
import { RunService } from '../src/runs/run-service.js';
import { FakeBackend } from '../src/runs/backends/fake-backend.js';
import type { RunSpec } from '../src/ledger/run-model.js';
import { startHttpApiServer, type HttpApiServer } from '../src/surfaces/http-api/server.js';
import { apiClient, type ApiClient } from '../test/support/sse.js';
import { percentile } from './stats.js';

export interface BridgeFigure {
  name: string;
  unit: string;
  value: number;
  better: 'lower' | 'higher';
}

const TOKEN = 'bench-token';
/** Runs queued behind one that never ends, for the heap each holds (past the default queue cap of 256: the bench raises it). */
const QUEUED_RUNS = 2_000;

function spec(id: string, root: string): RunSpec {
  return { id, backend: 'fake', mode: 'stdio', prompt: 'bench', cwd: root, policy: 'bench', limits: {}, schema_version: 'v2', parent: null, created_at: Date.now() };
}

/** Appends per second into a fresh ledger file: `events` token events over 20 runs, then the last flush. Best of 3. */
async function appendThroughput(root: string, events: number): Promise<number> {
  let best = 0;
  for (let pass = 0; pass < 3; pass++) {
    const ledger = new RunLedger({ store: new SqliteLedgerStore(path.join(root, `throughput-${pass}.db`)) });
    const runs = Array.from({ length: 20 }, (_, i) => `run-${pass}-${i}`);
    for (const id of runs) ledger.createRun(spec(id, root));
    await ledger.flush();
    const t0 = performance.now();
    for (let i = 0; i < events; i++) {
      const text = `token ${i} of a reply streamed by the agent`;
      ledger.append(runs[i % runs.length] as string, { type: 'token', ts: Date.now(), data: { text }, compat: { text, status: 'streaming', is_error: false } });
      // A producer on I/O lets the loop turn: the ledger writes one batch per turn.
      if (i % 2_000 === 1_999) await new Promise((r) => setImmediate(r));
    }
    await ledger.flush();
    best = Math.max(best, events / ((performance.now() - t0) / 1000));
    await ledger.close();
  }
  return best;
}

/**
 * Latency from append to the event being committed, at a steady 50,000 events/s (500 events every
 * 10 ms tick), and of the append call itself.
 */
async function appendLatency(root: string): Promise<{ commitP50: number; commitP99: number; callP99: number }> {
  const ledger = new RunLedger({ store: new SqliteLedgerStore(path.join(root, 'latency.db')) });
  ledger.createRun(spec('latency', root));
  await ledger.flush();
  const commit: number[] = [];
  const call: number[] = [];
  for (let tick = 0; tick < 200; tick++) {
    const started: number[] = [];
    for (let i = 0; i < 500; i++) {
      const t = performance.now();
      ledger.append('latency', { type: 'token', ts: Date.now(), data: { text: `t${i}` }, compat: { text: `t${i}`, status: 'streaming', is_error: false } });
      const after = performance.now();
      call.push(after - t);
      started.push(t);
    }
    await ledger.flush();
    const done = performance.now();
    for (const t of started) commit.push(done - t);
    await new Promise((r) => setTimeout(r, 10));
  }
  await ledger.close();
  commit.sort((a, b) => a - b);
  call.sort((a, b) => a - b);
  return { commitP50: percentile(commit, 50), commitP99: percentile(commit, 99), callP99: percentile(call, 99) };
}

interface Bridge {
  service: RunService;
  server: HttpApiServer;
  api: ApiClient;
  ledger: RunLedger;
  work: string;
  close(): Promise<void>;
}

async function fakeBridge(root: string, concurrency: number): Promise<Bridge> {
  const work = path.join(root, `work-${concurrency}`);
  mkdirSync(work, { recursive: true });
  const ledger = new RunLedger({ store: new SqliteLedgerStore(path.join(root, `bridge-${concurrency}.db`)) });
  const { service } = await RunService.start({ ledger, policy: parseGovernancePolicy({ sandbox: { roots: [root] }, limits: { concurrency }, queue: { max_per_owner: QUEUED_RUNS + 1 } }), backends: [new FakeBackend()], defaultCwd: work, scope: `${root}-${concurrency}` });
  const server = await startHttpApiServer({ runs: service, token: TOKEN });
  return {
    service,
    server,
    ledger,
    work,
    api: apiClient(server.url, TOKEN),
    close: async () => {
      await server.close();
      await service.dispose();
      await ledger.close();
    },
  };
}

/** Bytes of heap each queued run holds: 2,000 runs waiting behind one that never ends. */
async function memoryPerQueuedRun(root: string): Promise<number> {
  const bridge = await fakeBridge(root, 1);
  try {
    await bridge.service.submit({ backend: 'fake', prompt: 'slow', cwd: bridge.work });
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    await bridge.ledger.flush();
    gc?.();
    const before = process.memoryUsage().heapUsed;
    const n = QUEUED_RUNS;
    for (let i = 0; i < n; i++) await bridge.service.submit({ backend: 'fake', prompt: `queued run ${i} with a prompt of ordinary length for a coding task`, cwd: bridge.work });
    await bridge.ledger.flush();
    gc?.();
    return (process.memoryUsage().heapUsed - before) / n;
  } finally {
    await bridge.close();
  }
}

/** One run of 2,000 events followed by 100 SSE subscribers: how many got every event, and how long it took. */
async function fanOut(root: string): Promise<{ complete: number; ms: number }> {
  const bridge = await fakeBridge(root, 4);
  try {
    const t0 = performance.now();
    const run = (await bridge.api.call('POST', '/api/v2/agent/run', { backend: 'fake', prompt: 'tokens 2000', cwd: bridge.work })).body as { id: string; stream_url: string };
    const streams = await Promise.all(Array.from({ length: 100 }, () => bridge.api.stream(run.stream_url)));
    const ms = performance.now() - t0;
    const expected = (await bridge.service.get(run.id)).last_seq;
    const complete = streams.filter((s) => s.frames.length === expected && s.frames.every((f, i) => Number(f.id) === i + 1)).length;
    return { complete, ms };
  } finally {
    await bridge.close();
  }
}

/** POST run to the first event on its SSE stream, with the fake backend: the bridge's own overhead. */
async function firstEventFake(root: string): Promise<number[]> {
  const bridge = await fakeBridge(root, 4);
  const out: number[] = [];
  try {
    for (let i = 0; i < 60; i++) {
      const t0 = performance.now();
      const run = (await bridge.api.call('POST', '/api/v2/agent/run', { backend: 'fake', prompt: 'hello', cwd: bridge.work })).body as { stream_url: string };
      let first = 0;
      await bridge.api.stream(run.stream_url, {
        onFrame: (f) => {
          if (f.event === 'token' && first === 0) first = performance.now();
        },
      });
      if (i >= 10) out.push(first - t0);
    }
  } finally {
    await bridge.close();
  }
  return out.sort((a, b) => a - b);
}

export async function measureBridge(): Promise<BridgeFigure[]> {
  const root = mkdtempSync(path.join(tmpdir(), 'sb-bench-bridge-'));
  const figures: BridgeFigure[] = [];
  try {
    figures.push({ name: 'bridge: ledger appends per second (SQLite WAL, one core)', unit: 'ev/s', value: await appendThroughput(root, 300_000), better: 'higher' });
    const latency = await appendLatency(root);
    figures.push({ name: 'bridge: ledger append to commit p50 (at 50,000 ev/s)', unit: 'ms', value: latency.commitP50, better: 'lower' });
    figures.push({ name: 'bridge: ledger append to commit p99 (at 50,000 ev/s)', unit: 'ms', value: latency.commitP99, better: 'lower' });
    figures.push({ name: 'bridge: ledger append call p99', unit: 'ms', value: latency.callP99, better: 'lower' });
    const fake = await firstEventFake(root);
    figures.push({ name: 'bridge: POST run to first event p50 (fake backend: bridge overhead)', unit: 'ms', value: percentile(fake, 50), better: 'lower' });
    figures.push({ name: 'bridge: POST run to first event p99 (fake backend: bridge overhead)', unit: 'ms', value: percentile(fake, 99), better: 'lower' });
    figures.push({ name: 'bridge: heap per queued run', unit: 'KiB', value: (await memoryPerQueuedRun(root)) / 1024, better: 'lower' });
    const fan = await fanOut(root);
    figures.push({ name: 'bridge: SSE subscribers with every event, of 100 (2,000-event run)', unit: 'subs', value: fan.complete, better: 'higher' });
    figures.push({ name: 'bridge: 2,000-event run to 100 SSE subscribers', unit: 'ms', value: fan.ms, better: 'lower' });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return figures;
}
