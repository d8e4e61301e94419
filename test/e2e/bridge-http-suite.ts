/**
 * The agent bridge end to end over HTTP, with each of the four real CLIs against the scripted
 * model: a run streams token, tool_call, tool_result, patch and done in schema v1 and v2; the
 * ledger's replay equals the live stream event for event; a stream cut and resumed with
 * Last-Event-ID has no gap and no duplicate; a cancel mid-run ends `cancelled` with no process
 * left; a CLI killed with SIGKILL mid-run ends `failed (crashed)`; a file write outside the sandbox
 * is denied and recorded. Then, on one CLI: ten runs under a limit of 2, the output and time
 * limits, a folder outside the sandbox, and the official `openai` client on the chat proxy.
 * The suite runs once per ledger, each in a test file of its own (bridge-http.test.ts on SQLite,
 * bridge-http-postgres.test.ts on PostgreSQL, a real server the file starts:
 * test/support/test-ledger.ts), so the line runs both side by side and a failure names its ledger.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { EventSource, type FetchLike } from 'eventsource';
import { RunLedger } from '../../src/ledger/run-ledger.js';
import { parseGovernancePolicy, type GovernancePolicyInput } from '../../src/governance/policy-file.js';
import { RunService } from '../../src/runs/run-service.js';
import { defaultBackends } from '../../src/runs/backends/default-backends.js';
import { startHttpApiServer, type HttpApiServer } from '../../src/surfaces/http-api/server.js';
import { findProcessesByEnv, listProcesses } from '../../src/platform/index.js';
import { apiClient, type ApiClient, type SseFrame } from '../support/sse.js';
import { AGENT_BIN_DIRS } from './agent-flow.js';
import { RULES, useScriptedModel } from './scripted-model.js';
import { until } from '../support/processes.js';
import { useTestLedger, type LedgerKind } from '../support/test-ledger.js';

const CLIS = ['claude', 'codex', 'gemini', 'opencode'] as const;
const TOKEN = 'bridge-e2e-token';
const STREAMED = 'One two three four five six seven eight nine ten.';
/** The README's example: a deny rule for `rm`, on top of the built-in auto-approve rules. */
const README_DENY = { approvals: { rules: [{ tool: 'shell' as const, command: '^rm ', decision: 'deny' as const }] } };

/**
 * The bridge suite with its runs' ledger on `kind`: call it at the top level of a test file, one
 * kind per file. Every describe says which ledger it ran on.
 */
export function bridgeHttpSuite(kind: LedgerKind): void {
  /** A folder outside every sandbox, known before the scenario is written. */
  const OUTSIDE = mkdtempSync(path.join(tmpdir(), 'sb-bridge-outside-'));

  const testLedger = useTestLedger(kind);

  const scripted = useScriptedModel({
    name: 'bridge',
    title: 'Scripted bridge runs',
    rules: [
      RULES.sayHello,
      RULES.takeYourTime,
      RULES.writeFileByShell,
      {
        match: 'note and shell',
        steps: [
          { tool: 'shell', command: 'echo hello-from-tool > tool_out.txt && cat tool_out.txt', description: 'Write tool_out.txt' },
          { tool: 'write', path: 'note.txt', content: 'noted by the model\n' },
          { text: 'Wrote tool_out.txt and note.txt.' },
        ],
      },
      { match: 'remove the file', steps: [{ tool: 'shell', command: 'rm victim.txt', text: 'I will remove it.' }, { text: 'Tool said: {{tool_result}}' }] },
      { match: 'stream it slowly', steps: [{ text: STREAMED, chunk_chars: 8, chunk_delay_ms: 500 }] },
      { match: 'write outside', steps: [{ tool: 'write', path: path.join(OUTSIDE, 'escaped.txt'), content: 'should never be written\n' }, { text: 'Tried to write outside.' }] },
    ],
  });

  interface Bridge {
    service: RunService;
    server: HttpApiServer;
    api: ApiClient;
    ledger: RunLedger;
    work: string;
  }

  const bridges: Bridge[] = [];
  // Before the model stops (this hook runs first): conversations end while their model still answers.
  afterAll(async () => {
    for (const b of bridges) {
      await b.server.close();
      await b.service.dispose();
      await b.ledger.close();
    }
    rmSync(OUTSIDE, { recursive: true, force: true });
  });

  async function startBridge(only: readonly string[], policy: GovernancePolicyInput = {}): Promise<Bridge> {
    const root = scripted.tempDir('sb-bridge-root-').dir;
    const work = path.join(root, 'work');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(work);
    const homes = new Map<string, string>();
    const backends = defaultBackends({
      only,
      stdioOnly: true,
      binaryDirs: AGENT_BIN_DIRS,
      sandbox: (name) => {
        if (!homes.has(name)) homes.set(name, scripted.tempDir(`sb-bridge-${name}-home-`).dir);
        return { home: homes.get(name) ?? '', modelUrl: scripted.model.url };
      },
    });
    const ledger = new RunLedger({ store: await testLedger.store(root) });
    const { service } = await RunService.start({ ledger, policy: parseGovernancePolicy({ sandbox: { roots: [root] }, ...policy }), backends, defaultCwd: work, scope: root });
    const server = await startHttpApiServer({ runs: service, token: TOKEN });
    const bridge = { service, server, api: apiClient(server.url, TOKEN), ledger, work };
    bridges.push(bridge);
    return bridge;
  }

  interface RunJson {
    id: string;
    status: string;
    reason: string | null;
    message: string;
    stream_url: string;
    schema_version: string;
    started_at: number | null;
    ended_at: number | null;
  }

  async function submit(b: Bridge, body: Record<string, unknown>): Promise<RunJson> {
    const res = await b.api.call('POST', '/api/v2/agent/run', { cwd: b.work, ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body as RunJson;
  }

  async function runOf(b: Bridge, id: string): Promise<RunJson> {
    return ((await b.api.call('GET', `/api/v2/agent/runs/${id}`)).body as { run: RunJson }).run;
  }

  async function replay(b: Bridge, id: string): Promise<Record<string, unknown>[]> {
    return ((await b.api.call('GET', `/api/v2/agent/runs/${id}?events=true`)).body as { events: Record<string, unknown>[] }).events;
  }

  const parsed = (frames: SseFrame[]): Record<string, unknown>[] => frames.map((f) => JSON.parse(f.data) as Record<string, unknown>);
  const explain = (events: Record<string, unknown>[]): string => JSON.stringify(events.map((e) => [e.type, (e as { compat?: { text?: string } }).compat?.text ?? e.text]), null, 1);

  const requestsFor = (prompt: string): number => scripted.model.modelRequests().filter((r) => r.plan?.prompt.includes(prompt)).length;

  /** Waits until the model has one more request for `prompt` than `before`: the CLI is in the turn. */
  async function untilModelAsked(prompt: string, before: number): Promise<void> {
    await until(() => requestsFor(prompt) > before, `the model to be asked about ${prompt}`, 90_000);
    expect(requestsFor(prompt)).toBeGreaterThan(before);
  }

  /** The run's processes (the CLI and whatever it started), by the marker every one carries. */
  const processesOf = (runId: string): number[] => findProcessesByEnv('SWITCHBOARD_BRIDGE_RUN', runId);

  describe.each(CLIS)(`the bridge over HTTP with %s (ledger: ${kind})`, (cli) => {
    let bridge: Bridge | undefined;
    const get = async (): Promise<Bridge> => (bridge ??= await startBridge([cli], { limits: { concurrency: 4 }, ...README_DENY }));

    it('stops rm before it runs with the README deny rule: the file survives and the run fails (policy)', { timeout: 240_000 }, async () => {
      const b = await get();
      const victim = path.join(b.work, 'victim.txt');
      writeFileSync(victim, 'keep me\n');
      const run = await submit(b, { backend: cli, prompt: 'remove the file please' });
      const events = parsed((await b.api.stream(run.stream_url)).frames);
      expect(readFileSync(victim, 'utf8')).toBe('keep me\n');
      expect(await runOf(b, run.id), explain(events)).toMatchObject({ status: 'failed', reason: 'policy' });
      const denied = events.find((e) => e.type === 'decision' && (e.data as { decision?: string }).decision === 'deny');
      // Asked before the act: governance's own decision, not a CLI's report of something done.
      expect(denied?.data, explain(events)).toMatchObject({ by: 'policy', subject: { tool: 'shell', command: expect.stringContaining('rm victim.txt') as string } });
    });

    it('streams the reply as the model writes it, in several token events', { timeout: 240_000 }, async () => {
      const b = await get();
      const run = await submit(b, { backend: cli, prompt: 'stream it slowly please', schema_version: 'v2' });
      const events = parsed((await b.api.stream(run.stream_url)).frames);
      expect(await runOf(b, run.id), explain(events)).toMatchObject({ status: 'completed' });
      const tokens = events.filter((e) => e.type === 'token').map((e) => (e.compat as { text: string }).text);
      expect(tokens.join('').trim(), explain(events)).toBe(STREAMED);
      // Seven pieces 500 ms apart, coalesced at most every 50 ms: more than one event, as they came
      // (not one per piece: a loaded machine makes OpenCode pass on several pieces at once).
      expect(tokens.length, explain(events)).toBeGreaterThanOrEqual(2);
      const ts = events.map((e) => e.ts as number);
      expect([...ts].sort((x, y) => x - y)).toEqual(ts);
    });

    it("judges a follow-up's tool calls as the follow-up's own: allowed, carried out, recorded in its events", { timeout: 240_000 }, async () => {
      const b = await get();
      rmSync(path.join(b.work, 'tool_out.txt'), { force: true });
      const first = await submit(b, { backend: cli, prompt: 'say hello please' });
      await b.api.stream(first.stream_url);
      expect(await runOf(b, first.id)).toMatchObject({ status: 'completed' });
      const before = (await replay(b, first.id)).length;
      // The same conversation (its CLI kept open), a new run: its governance, not the ended run's, answers.
      const next = await submit(b, { backend: cli, prompt: 'write a file please', parent: first.id });
      const events = parsed((await b.api.stream(next.stream_url)).frames);
      expect(await runOf(b, next.id), explain(events)).toMatchObject({ status: 'completed' });
      expect(readFileSync(path.join(b.work, 'tool_out.txt'), 'utf8')).toBe('hello-from-tool\n');
      const decisions = events.filter((e) => e.type === 'decision' && (e.data as { subject?: { tool?: string } }).subject?.tool === 'shell');
      expect(decisions.map((e) => e.data), explain(events)).toEqual([expect.objectContaining({ decision: 'allow', by: 'policy' })]);
      expect(await replay(b, first.id)).toHaveLength(before);
    });

    it('streams token, tool_call, tool_result, patch and done in v2; a cut stream resumes with no gap; the replay is the same', { timeout: 240_000 }, async () => {
      const b = await get();
      const run = await submit(b, { backend: cli, prompt: 'note and shell please', schema_version: 'v2' });
      const first = await b.api.stream(run.stream_url, { stopAfter: 4 });
      expect(first.frames.map((f) => f.id)).toEqual(['1', '2', '3', '4']);
      const rest = await b.api.stream(run.stream_url, { lastEventId: '4' });
      const live = parsed([...first.frames, ...rest.frames]);
      expect(live.map((e) => e.seq)).toEqual(live.map((_, i) => i + 1));
      const types = live.map((e) => e.type);
      for (const t of ['token', 'tool_call', 'tool_result', 'patch', 'done']) expect(types, explain(live)).toContain(t);
      expect(live.at(-1), explain(live)).toMatchObject({ type: 'done', schema_version: 'v2', data: { outcome: 'completed' }, compat: { status: 'completed', is_error: false } });
      expect(await replay(b, run.id)).toEqual(live);
      expect(existsSync(path.join(b.work, 'note.txt'))).toBe(true);
    });

    it('streams the same kinds of events in v1, flat with the compat fields, and the replay is the same', { timeout: 240_000 }, async () => {
      const b = await get();
      // The run before wrote note.txt. Claude Code asking about every call (its ask rule) refuses to
      // write over a file its conversation has not read ("File has not been read yet"), which the
      // scripted model never does first: each run starts without the last one's files.
      for (const name of ['note.txt', 'tool_out.txt']) rmSync(path.join(b.work, name), { force: true });
      const run = await submit(b, { backend: cli, prompt: 'note and shell please', schema_version: 'v1' });
      const live = parsed((await b.api.stream(run.stream_url)).frames);
      const types = live.map((e) => e.type);
      for (const t of ['token', 'tool_call', 'tool_result', 'patch', 'done']) expect(types, explain(live)).toContain(t);
      for (const e of live) expect(Object.keys(e).sort()).toEqual(['is_error', 'run_id', 'schema_version', 'seq', 'status', 'text', 'ts', 'type']);
      expect(live.at(-1)).toMatchObject({ type: 'done', status: 'completed', is_error: false });
      expect(await replay(b, run.id)).toEqual(live);
    });

    it('cancels a run mid-turn: cancelled, with no process left', { timeout: 240_000 }, async () => {
      const b = await get();
      const before = requestsFor('take your time');
      const run = await submit(b, { backend: cli, prompt: 'take your time please' });
      await untilModelAsked('take your time', before);
      expect(processesOf(run.id).length).toBeGreaterThan(0);
      const cancelled = await b.api.call('POST', '/api/v2/agent/cancel', { run_id: run.id });
      expect(cancelled.body).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
      expect(processesOf(run.id)).toEqual([]);
      expect(parsed((await b.api.stream(run.stream_url)).frames).at(-1)).toMatchObject({ type: 'done', data: { outcome: 'cancelled' } });
    });

    it('records a CLI killed with SIGKILL mid-run as failed (crashed); a follow-up starts the conversation again', { timeout: 240_000 }, async () => {
      const b = await get();
      const before = requestsFor('take your time');
      const run = await submit(b, { backend: cli, prompt: 'take your time please' });
      await untilModelAsked('take your time', before);
      const marked = new Set(processesOf(run.id));
      const cliProcess = listProcesses().find((p) => marked.has(p.pid) && p.ppid === process.pid && !p.zombie);
      expect(cliProcess).toBeDefined();
      process.kill(cliProcess?.pid ?? 0, 'SIGKILL');
      const frames = (await b.api.stream(run.stream_url)).frames;
      const ended = await runOf(b, run.id);
      expect(ended, explain(parsed(frames))).toMatchObject({ status: 'failed', reason: 'crashed' });
      expect(ended.message).toMatch(/SIGKILL/);
      // Nothing the killed CLI started is left behind.
      expect(processesOf(run.id)).toEqual([]);
      // The conversation's process is started again for the next prompt (Claude and Codex resume the
      // CLI's own conversation; an ACP agent gets a new session, said in a notice).
      const next = await submit(b, { backend: cli, prompt: 'say hello please', parent: run.id });
      const events = parsed((await b.api.stream(next.stream_url)).frames);
      expect(await runOf(b, next.id), explain(events)).toMatchObject({ status: 'completed' });
      expect(events.filter((e) => e.type === 'token').map((e) => (e.compat as { text: string }).text).join('').trim()).toBe('Hello from the scripted model.');
    });

    it('denies a file write outside the sandbox and records the decision with its rule', { timeout: 240_000 }, async () => {
      const b = await get();
      rmSync(path.join(OUTSIDE, 'escaped.txt'), { force: true });
      const run = await submit(b, { backend: cli, prompt: 'write outside please' });
      await b.api.stream(run.stream_url);
      const events = await replay(b, run.id);
      const denied = events.find((e) => e.type === 'decision' && (e.data as { decision?: string }).decision === 'deny');
      expect(denied, explain(events)).toBeDefined();
      expect(denied?.data).toMatchObject({ rule: expect.stringMatching(/^sandbox\./) as string });
      // Gemini CLI refuses a path outside its workspace before it asks: the decision is the CLI's,
      // recorded when its refusal comes back. The others ask (OpenCode first for the folder outside
      // its project), and governance names the path.
      if (cli === 'gemini') expect(denied?.data).toMatchObject({ by: 'cli' });
      else expect(JSON.stringify(denied?.data)).toContain(OUTSIDE);
      // Asked before the act (Codex too, through its app server): nothing is written, and the run ends as the policy says.
      if (cli !== 'gemini') expect(await runOf(b, run.id)).toMatchObject({ status: 'failed', reason: 'policy' });
      expect(existsSync(path.join(OUTSIDE, 'escaped.txt'))).toBe(false);
    });
  });

  describe(`the bridge over HTTP, governance with a real CLI (ledger: ${kind})`, () => {
    it('with a limit of 2, ten runs at once never have more than 2 running, and all complete in order', { timeout: 200_000 }, async () => {
      const b = await startBridge(['claude'], { limits: { concurrency: 2 } });
      const runs: RunJson[] = [];
      // A wall clock on each, so that a run that never ends fails the test with its reason instead of hanging it.
      for (let i = 0; i < 10; i++) runs.push(await submit(b, { backend: 'claude', prompt: 'say hello please', limits: { wall_clock_ms: 120_000 } }));
      expect(runs.filter((r) => r.status === 'queued').length).toBeGreaterThanOrEqual(8);
      await Promise.all(runs.map((r) => b.api.stream(r.stream_url)));
      const ended = await Promise.all(runs.map((r) => runOf(b, r.id)));
      expect(ended.map((r) => r.status), JSON.stringify(ended.map((r) => r.message))).toEqual(Array(10).fill('completed'));
      // From the ledger: at no moment were more than two between start and end.
      const points = ended.flatMap((r) => [{ t: r.started_at ?? 0, d: 1 }, { t: r.ended_at ?? 0, d: -1 }]).sort((x, y) => x.t - y.t || x.d - y.d);
      let depth = 0;
      let most = 0;
      for (const p of points) most = Math.max(most, (depth += p.d));
      expect(most).toBeLessThanOrEqual(2);
      const starts = ended.map((r) => r.started_at ?? 0);
      expect([...starts].sort((x, y) => x - y)).toEqual(starts);
    });

    it('ends a run past its output limit or its wall clock with that reason, and refuses a folder outside the sandbox', { timeout: 240_000 }, async () => {
      const b = await startBridge(['claude']);
      const limited = await submit(b, { backend: 'claude', prompt: 'write a file please', limits: { max_events: 1 } });
      await b.api.stream(limited.stream_url);
      expect(await runOf(b, limited.id)).toMatchObject({ status: 'failed', reason: 'output_limit' });
      const events = await replay(b, limited.id);
      expect(events.filter((e) => ['token', 'tool_call', 'tool_result', 'patch'].includes(e.type as string))).toHaveLength(1);
      const slow = await submit(b, { backend: 'claude', prompt: 'take your time please', limits: { wall_clock_ms: 4_000 } });
      await b.api.stream(slow.stream_url);
      expect(await runOf(b, slow.id)).toMatchObject({ status: 'failed', reason: 'timeout' });
      expect(processesOf(slow.id)).toEqual([]);
      const refused = await b.api.call('POST', '/api/v2/agent/run', { backend: 'claude', prompt: 'say hello please', cwd: OUTSIDE });
      expect(refused).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN', details: { rule: 'sandbox.roots' } } } });
    });

    it('the openai client with its default retries starts one run per call and sees the policy stop Codex as an error', { timeout: 240_000 }, async () => {
      const b = await startBridge(['codex'], README_DENY);
      writeFileSync(path.join(b.work, 'victim.txt'), 'keep me\n');
      // The package's defaults: two retries on a 5xx or a dropped connection.
      const client = new OpenAI({ apiKey: TOKEN, baseURL: `${b.server.url}/api/v2/chat/proxy` });
      const failure = await client.chat.completions.create({ model: 'codex', messages: [{ role: 'user', content: 'remove the file please' }] }).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect(failure).toMatchObject({ status: 403 });
      expect(readFileSync(path.join(b.work, 'victim.txt'), 'utf8')).toBe('keep me\n');
      const runs = (await b.service.list({})).runs;
      expect(runs.map((r) => [r.status, r.reason])).toEqual([['failed', 'policy']]);
    });

    it('lets a standard EventSource follow a run to its end; reconnecting after done it is closed at once', { timeout: 240_000 }, async () => {
      const b = await startBridge(['claude']);
      const run = await submit(b, { backend: 'claude', prompt: 'say hello please' });
      const withToken: FetchLike = (url, init) => fetch(url, { ...init, headers: { ...init.headers, Authorization: `Bearer ${TOKEN}` } });
      const source = new EventSource(`${b.server.url}${run.stream_url}`, { fetch: withToken });
      const ids: string[] = [];
      let text = '';
      let opened = 0;
      const closed = await new Promise<{ code?: number; message?: string }>((resolve) => {
        source.onopen = () => opened++;
        source.addEventListener('token', (e) => {
          ids.push(e.lastEventId);
          text += (JSON.parse(e.data as string) as { compat?: { text?: string } }).compat?.text ?? '';
        });
        source.addEventListener('done', (e) => ids.push(e.lastEventId));
        // After done the server ends the stream; EventSource reconnects with Last-Event-ID = done's
        // id, and the 204 it gets tells it to stop (an error event, then CLOSED).
        source.onerror = (err) => {
          if (source.readyState === source.CLOSED) resolve(err);
        };
      });
      source.close();
      expect(closed.code).toBe(204);
      expect(opened).toBe(1);
      expect(text.trim()).toBe('Hello from the scripted model.');
      expect(new Set(ids).size).toBe(ids.length);
      expect((await runOf(b, run.id)).status).toBe('completed');
    });

    it('lets the official openai client drive a coding agent through the chat proxy, whole and streaming', { timeout: 240_000 }, async () => {
      const b = await startBridge(['claude']);
      const client = new OpenAI({ apiKey: TOKEN, baseURL: `${b.server.url}/api/v2/chat/proxy`, maxRetries: 0, timeout: 120_000 });
      const whole = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'say hello please' }] });
      expect(whole.choices[0]?.message.content?.trim()).toBe('Hello from the scripted model.');
      // Nobody can follow a chat completion up: its CLI is gone by the time the answer arrives.
      const wholeRun = (whole as unknown as { switchboard: { run_id: string } }).switchboard.run_id;
      expect(processesOf(wholeRun)).toEqual([]);
      expect(b.service.idleConversations()).toMatchObject({ conversations: 0, processes: 0 });
      const stream = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'say hello please' }], stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text.trim()).toBe('Hello from the scripted model.');
      // The reply as the CLI streams it: more than one content chunk.
      const slow = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'stream it slowly please' }], stream: true });
      const pieces: string[] = [];
      for await (const chunk of slow) {
        const content = chunk.choices[0]?.delta.content;
        if (content) pieces.push(content);
      }
      expect(pieces.join('').trim()).toBe(STREAMED);
      expect(pieces.length).toBeGreaterThanOrEqual(2);
      const health = (await b.api.call('GET', '/api/v2/agent/backends')).body as { backends: { name: string; health: { ok: boolean; version_support: string | null; model_reachable: boolean | null } }[] };
      expect(health.backends[0]).toMatchObject({ name: 'claude', health: { ok: true, model_reachable: true } });
      expect(['exact', 'nearest']).toContain(health.backends[0]?.health.version_support);
      // A run of the agent endpoint keeps its CLI for a follow-up, counted with its processes.
      const kept = await submit(b, { backend: 'claude', prompt: 'say hello please' });
      await b.api.stream(kept.stream_url);
      expect(processesOf(kept.id).length).toBeGreaterThan(0);
      const idle = ((await b.api.call('GET', '/api/v2/agent/backends')).body as { idle: { conversations: number; processes: number; max: number } }).idle;
      expect(idle).toMatchObject({ conversations: 1, max: 4 });
      expect(idle.processes).toBeGreaterThan(0);
    });
  });

  describe(`the bridge over HTTP in a PTY, execute() in a pane: the fallback for CLIs without a structured mode (ledger: ${kind})`, () => {
    it('runs Aider to the end with the same events: the approval as a tool_call judged by governance, the reply, the file as a patch, done', { timeout: 240_000 }, async () => {
      const b = await startBridge(['aider']);
      const backends = (await b.api.call('GET', '/api/v2/agent/backends')).body as { backends: { name: string; default_mode: string }[] };
      expect(backends.backends).toEqual([expect.objectContaining({ name: 'aider', default_mode: 'pty' })]);
      const run = await submit(b, { backend: 'aider', prompt: 'write a file please', schema_version: 'v2' });
      const live = parsed((await b.api.stream(run.stream_url)).frames);
      expect(await runOf(b, run.id), explain(live)).toMatchObject({ status: 'completed', reason: 'finished' });
      const types = live.map((e) => e.type);
      for (const t of ['tool_call', 'decision', 'token', 'patch', 'done']) expect(types, explain(live)).toContain(t);
      expect(live.find((e) => e.type === 'decision' && (e.data as { subject?: { tool?: string } }).subject?.tool === 'shell')?.data).toMatchObject({ decision: 'allow', by: 'policy' });
      expect(live.find((e) => e.type === 'patch')?.data).toMatchObject({ path: 'tool_out.txt', applied: true });
      expect(existsSync(path.join(b.work, 'tool_out.txt'))).toBe(true);
      expect(await replay(b, run.id)).toEqual(live);
    });
  });
}
