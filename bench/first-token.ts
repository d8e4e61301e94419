/**
 * The bridge's first token (issue 22): for each real CLI against the scripted model, whose reply
 * streams in pieces with pauses, through a real daemon (`switchboard daemon --agent-home --model-url`,
 * as users run it), in the same run:
 *
 * - direct: the CLI started by hand in its structured mode (direct-cli.ts), spawn to its first
 *   reply text on stdout: the reference;
 * - run: POST /api/v2/agent/run, then its SSE stream, POST to the first `token` event at the client;
 * - proxy: POST /api/v2/chat/proxy/chat/completions with `stream: true`, to the first chunk with
 *   content;
 * - overhead: run (or proxy) minus direct, paired within an iteration;
 * - model to client: the scripted model's first write of the reply (ModelServer onReplySent, in this
 *   process, on the same clock) to the client's first token, and to the direct CLI's first text.
 *
 * Each iteration runs the three one after another; the first iteration is a warm-up (the CLIs' own
 * caches) and is not counted. A daemon per CLI, so the conversations the bridge keeps idle after
 * each run are one CLI's at most.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ModelServer, type SentReply } from '../src/model-server/index.js';
import { AgentProgram } from '../src/drivers/agent-program.js';
import { apiClient, type ApiClient } from '../test/support/sse.js';
import { DaemonProcess } from './daemon-process.js';
import { DIRECT, runDirect } from './direct-cli.js';
import { percentile, sleep } from './stats.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const AGENT_CLIS = path.join(here, '..', 'test', 'agent-clis');
const BIN = path.join(AGENT_CLIS, 'node_modules', '.bin');
const OPENCODE_PLUGIN_DIR = path.join(AGENT_CLIS, 'opencode-plugin');
const FIRST_TOKEN_CLIS = ['claude', 'codex', 'gemini', 'opencode'] as const;

/** The reply streams CHUNK_CHARS characters every CHUNK_DELAY_MS: about a second of streaming. */
const CHUNK_CHARS = 8;
const CHUNK_DELAY_MS = 100;
const REPLY = 'The bridge hands this reply on in pieces as the model writes them, eight characters at a time.';
const RULE = 'bench stream';
const TURN_TIMEOUT_MS = 180_000;
/** How long the model's record of a reply may lag the client's end of the run (it is written as the reply ends). */
const SENT_WAIT_MS = 5_000;

const now = (): number => performance.timeOrigin + performance.now();

interface Stats {
  n: number;
  median: number;
  p90: number;
  min: number;
  max: number;
}

function stats(values: number[]): Stats | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const round = (v: number): number => Number(v.toFixed(1));
  return { n: sorted.length, median: round(percentile(sorted, 50)), p90: round(percentile(sorted, 90)), min: round(sorted[0] as number), max: round(sorted.at(-1) as number) };
}

/** One iteration's times for one way of running the CLI, in wall-clock ms. */
interface Sample {
  startedAt: number;
  firstTokenAt: number | undefined;
  /** The scripted model's first write of this prompt's reply, and its end. */
  modelFirstAt: number | undefined;
  modelEndAt: number | undefined;
  problem?: string;
}

type Way = 'direct' | 'run' | 'proxy';
const WAYS: Way[] = ['direct', 'run', 'proxy'];

interface CliReport {
  version: string | null;
  /** The bridge backend's mode as the direct reference runs it. */
  direct_mode: string;
  skipped?: string;
  measures: Record<string, Stats | null>;
  /** Runs whose first token reached the client before the model had written its whole reply: streaming, not a reply at the end. */
  first_token_before_model_end: Record<Way, string>;
  problems: string[];
}

export interface FirstTokenReport {
  date: string;
  machine: { node: string; cpus: number; cpu: string | undefined; memory_gib: number; loadavg_start: number[]; loadavg_end: number[] };
  runs_per_cli: number;
  model_reply: { chars: number; chunk_chars: number; chunk_delay_ms: number };
  aims: { overhead_ms: number; model_to_client_ms: number };
  clis: Record<string, CliReport>;
}

export interface FirstTokenFigure {
  name: string;
  unit: string;
  value: number;
  /** The CLI started directly, where the figure has that reference. */
  peer: number | null;
  better: 'lower' | 'higher';
}

/** Reads a POSTed chat completion stream until it ends; calls `onContent` at each chunk with content. */
async function chatStream(api: ApiClient, body: unknown, onContent: () => void): Promise<string | undefined> {
  const res = await fetch(`${api.base}/api/v2/chat/proxy/chat/completions`, { method: 'POST', headers: { Authorization: `Bearer ${api.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok || !res.body) return `chat proxy answered ${res.status}: ${(await res.text()).slice(0, 300)}`;
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, cut).trim();
      buffer = buffer.slice(cut + 1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') return undefined;
      const parsed = JSON.parse(data) as { choices?: { delta?: { content?: string } }[]; error?: { message?: string } };
      if (parsed.error) return `chat proxy error: ${parsed.error.message ?? data}`;
      if ((parsed.choices?.[0]?.delta?.content ?? '') !== '') onContent();
    }
  }
  return 'the chat stream ended without [DONE]';
}

class ModelClock {
  private readonly sent: SentReply[] = [];

  record = (reply: SentReply): void => {
    this.sent.push(reply);
  };

  /** The main reply to the prompt carrying `nonce`: when its writing began and ended. */
  async replyTo(nonce: string): Promise<{ firstAt: number; endAt: number } | undefined> {
    const deadline = now() + SENT_WAIT_MS;
    for (;;) {
      const found = this.sent.filter((s) => s.request.plan?.role === 'main' && s.request.plan.prompt.includes(nonce));
      if (found.length > 0) return { firstAt: Math.min(...found.map((s) => s.firstWriteAt)), endAt: Math.max(...found.map((s) => s.endAt)) };
      if (now() > deadline) return undefined;
      await sleep(20);
    }
  }
}

async function viaRun(api: ApiClient, cli: string, prompt: string, cwd: string): Promise<Omit<Sample, 'modelFirstAt' | 'modelEndAt'>> {
  const startedAt = now();
  const submitted = await api.call('POST', '/api/v2/agent/run', { backend: cli, prompt, cwd });
  if (submitted.status !== 202) return { startedAt, firstTokenAt: undefined, problem: `POST /agent/run answered ${submitted.status}: ${JSON.stringify(submitted.body).slice(0, 300)}` };
  const { stream_url: streamUrl } = submitted.body as { stream_url: string };
  let firstTokenAt: number | undefined;
  let end = '';
  await api.stream(streamUrl, {
    onFrame: (frame) => {
      if (frame.event === 'token') firstTokenAt ??= now();
      if (frame.event === 'done' || frame.event === 'run_error') end = `${frame.event} ${frame.data.slice(0, 300)}`;
    },
  });
  const completed = /"outcome":"completed"/.test(end);
  return { startedAt, firstTokenAt, ...(completed ? {} : { problem: `the run did not complete: ${end || 'no done event'}` }) };
}

async function viaProxy(api: ApiClient, cli: string, prompt: string): Promise<Omit<Sample, 'modelFirstAt' | 'modelEndAt'>> {
  const startedAt = now();
  let firstTokenAt: number | undefined;
  const problem = await chatStream(api, { model: cli, messages: [{ role: 'user', content: prompt }], stream: true }, () => {
    firstTokenAt ??= now();
  });
  return { startedAt, firstTokenAt, ...(problem ? { problem } : {}) };
}

/** One CLI, `runs` counted iterations after a warm-up. */
async function measureCli(cli: string, runs: number, model: ModelServer, clock: ModelClock, root: string): Promise<CliReport> {
  const direct = DIRECT[cli];
  const report: CliReport = { version: null, direct_mode: direct?.mode ?? 'none', measures: {}, first_token_before_model_end: { direct: '', run: '', proxy: '' }, problems: [] };
  if (!direct) return { ...report, skipped: 'no direct command in bench/direct-cli.ts' };
  const program = new AgentProgram(cli, { binaryDirs: [BIN] });
  const health = await program.health();
  report.version = health.version;
  if (!health.ok) return { ...report, skipped: health.problem ?? 'not healthy' };

  const work = path.join(root, `work-${cli}`);
  const directHome = path.join(root, `direct-home-${cli}`);
  mkdirSync(work, { recursive: true });
  mkdirSync(directHome, { recursive: true });
  const daemon = await DaemonProcess.start({ SWITCHBOARD_AGENT_PATH: BIN, SWITCHBOARD_OPENCODE_PLUGIN_DIR: OPENCODE_PLUGIN_DIR }, ['--agent-home', path.join(root, `bridge-homes-${cli}`), '--model-url', model.url], (home) => {
    writeFileSync(path.join(home, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(work)}]\n`);
  });
  const samples: Record<Way, Sample[]> = { direct: [], run: [], proxy: [] };
  try {
    if (!daemon.httpUrl) throw new Error('the daemon printed no HTTP API address');
    const api = apiClient(daemon.httpUrl, daemon.token);
    const backends = (await api.call('GET', '/api/v2/agent/backends')).body as { backends: { name: string; health: { ok: boolean; version: string | null; problem?: string } }[] };
    const backend = backends.backends.find((b) => b.name === cli);
    if (!backend?.health.ok) return { ...report, skipped: `the bridge's ${cli} backend is not healthy: ${backend?.health.problem ?? 'not listed'}` };

    for (let i = 0; i <= runs; i++) {
      for (const way of WAYS) {
        const nonce = `${cli}-${way}-${i}-${Math.random().toString(36).slice(2, 8)}`;
        const prompt = `${RULE} please (${nonce})`;
        const got =
          way === 'direct'
            ? await runDirect(cli, program, { cwd: work, sandbox: { home: directHome, modelUrl: model.url }, prompt, timeoutMs: TURN_TIMEOUT_MS }).then((r) => ({ startedAt: r.startedAt, firstTokenAt: r.firstTextAt, ...(r.problem ? { problem: r.problem } : {}) }))
            : way === 'run'
              ? await viaRun(api, cli, prompt, work)
              : await viaProxy(api, cli, prompt);
        const reply = await clock.replyTo(nonce);
        const sample: Sample = { ...got, modelFirstAt: reply?.firstAt, modelEndAt: reply?.endAt };
        if (got.firstTokenAt === undefined || got.problem) report.problems.push(`${way} #${i}: ${got.problem ?? 'no token'}`);
        if (!reply) report.problems.push(`${way} #${i}: the model never wrote a reply to this prompt`);
        const shown = got.firstTokenAt === undefined ? '-' : `${Math.round(got.firstTokenAt - got.startedAt)} ms`;
        console.log(`  ${cli} ${way} #${i}${i === 0 ? ' (warm-up)' : ''}: first token ${shown}`);
        if (i > 0) samples[way].push(sample);
      }
    }
  } finally {
    await daemon.stop();
  }

  const firstToken = (s: Sample): number | undefined => (s.firstTokenAt === undefined ? undefined : s.firstTokenAt - s.startedAt);
  const fromModel = (s: Sample): number | undefined => (s.firstTokenAt === undefined || s.modelFirstAt === undefined ? undefined : s.firstTokenAt - s.modelFirstAt);
  const defined = (values: (number | undefined)[]): number[] => values.filter((v): v is number => v !== undefined);
  const paired = (way: Way): number[] =>
    defined(
      samples[way].map((s, i) => {
        const d = samples.direct[i];
        const a = firstToken(s);
        const b = d ? firstToken(d) : undefined;
        return a === undefined || b === undefined ? undefined : a - b;
      }),
    );
  report.measures = {
    direct_start_to_first_text_ms: stats(defined(samples.direct.map(firstToken))),
    run_post_to_first_token_ms: stats(defined(samples.run.map(firstToken))),
    proxy_post_to_first_token_ms: stats(defined(samples.proxy.map(firstToken))),
    run_overhead_ms: stats(paired('run')),
    proxy_overhead_ms: stats(paired('proxy')),
    model_first_chunk_to_direct_text_ms: stats(defined(samples.direct.map(fromModel))),
    model_first_chunk_to_run_token_ms: stats(defined(samples.run.map(fromModel))),
    model_first_chunk_to_proxy_token_ms: stats(defined(samples.proxy.map(fromModel))),
  };
  for (const way of WAYS) {
    const early = samples[way].filter((s) => s.firstTokenAt !== undefined && s.modelEndAt !== undefined && s.firstTokenAt < s.modelEndAt).length;
    report.first_token_before_model_end[way] = `${early} of ${samples[way].length}`;
  }
  return report;
}

/** `only`: the CLIs to measure (default all four); `runs`: counted iterations per CLI. */
export async function measureFirstTokens(options: { runs: number; only?: readonly string[] }): Promise<{ report: FirstTokenReport; figures: FirstTokenFigure[] }> {
  const clock = new ModelClock();
  const model = await ModelServer.start({ scenario: { name: 'bench-first-token', rules: [{ match: RULE, steps: [{ text: REPLY, chunk_chars: CHUNK_CHARS, chunk_delay_ms: CHUNK_DELAY_MS }] }] }, onReplySent: clock.record });
  const root = mkdtempSync(path.join(tmpdir(), 'sb-bench-first-token-'));
  // OpenCode's sandbox HOME is seeded with its plugin package from here, for the direct starts as
  // for the daemon's; without it OpenCode fetches the package from the npm registry at each start.
  const pluginDirBefore = process.env.SWITCHBOARD_OPENCODE_PLUGIN_DIR;
  process.env.SWITCHBOARD_OPENCODE_PLUGIN_DIR = OPENCODE_PLUGIN_DIR;
  const report: FirstTokenReport = {
    date: new Date().toISOString(),
    machine: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model, memory_gib: Math.round(totalmem() / 2 ** 30), loadavg_start: loadavg().map((l) => Number(l.toFixed(2))), loadavg_end: [] },
    runs_per_cli: options.runs,
    model_reply: { chars: REPLY.length, chunk_chars: CHUNK_CHARS, chunk_delay_ms: CHUNK_DELAY_MS },
    aims: { overhead_ms: 5, model_to_client_ms: 60 },
    clis: {},
  };
  try {
    for (const cli of FIRST_TOKEN_CLIS) {
      if (options.only && options.only.length > 0 && !options.only.includes(cli)) continue;
      try {
        report.clis[cli] = await measureCli(cli, options.runs, model, clock, root);
      } catch (err) {
        report.clis[cli] = { version: null, direct_mode: DIRECT[cli]?.mode ?? 'none', skipped: `failed: ${(err as Error).message}`, measures: {}, first_token_before_model_end: { direct: '', run: '', proxy: '' }, problems: [] };
      }
    }
  } finally {
    await model.close();
    rmSync(root, { recursive: true, force: true });
    if (pluginDirBefore === undefined) delete process.env.SWITCHBOARD_OPENCODE_PLUGIN_DIR;
    else process.env.SWITCHBOARD_OPENCODE_PLUGIN_DIR = pluginDirBefore;
  }
  report.machine.loadavg_end = loadavg().map((l) => Number(l.toFixed(2)));
  return { report, figures: figuresOf(report) };
}

/** The medians as bench figures (latest.json), each bridge figure beside the direct CLI's where there is one. */
function figuresOf(report: FirstTokenReport): FirstTokenFigure[] {
  const out: FirstTokenFigure[] = [];
  for (const [cli, r] of Object.entries(report.clis)) {
    if (r.skipped) continue;
    const label = `${cli} ${r.version ?? ''}`.trimEnd();
    const m = (key: string): number | undefined => r.measures[key]?.median;
    const push = (name: string, value: number | undefined, peer: number | undefined | null): void => {
      if (value !== undefined) out.push({ name: `bridge first token: ${name}: ${label}`, unit: 'ms', value, peer: peer ?? null, better: 'lower' });
    };
    push('POST run to first token p50', m('run_post_to_first_token_ms'), m('direct_start_to_first_text_ms'));
    push('chat proxy stream to first content p50', m('proxy_post_to_first_token_ms'), m('direct_start_to_first_text_ms'));
    push('run overhead over direct p50', m('run_overhead_ms'), null);
    push('model first chunk to run token p50', m('model_first_chunk_to_run_token_ms'), m('model_first_chunk_to_direct_text_ms'));
    push('model first chunk to proxy content p50', m('model_first_chunk_to_proxy_token_ms'), m('model_first_chunk_to_direct_text_ms'));
  }
  return out;
}

/** The table printed after the section: one row per CLI and measure. */
export function printFirstTokenTable(report: FirstTokenReport): void {
  console.log(`\n  first token, ms (N=${report.runs_per_cli} per CLI; reply ${report.model_reply.chars} chars, ${report.model_reply.chunk_chars} every ${report.model_reply.chunk_delay_ms} ms; aims: overhead <= ${report.aims.overhead_ms}, model to client <= ${report.aims.model_to_client_ms})`);
  console.log(`  ${'cli'.padEnd(18)} ${'measure'.padEnd(38)} ${'median'.padStart(8)} ${'p90'.padStart(8)} ${'min'.padStart(8)} ${'max'.padStart(8)}`);
  for (const [cli, r] of Object.entries(report.clis)) {
    const label = `${cli} ${r.version ?? ''}`.trimEnd();
    if (r.skipped) {
      console.log(`  ${label.padEnd(18)} skipped: ${r.skipped}`);
      continue;
    }
    for (const [name, s] of Object.entries(r.measures)) {
      const cell = (v: number | undefined): string => (v === undefined ? '-' : String(v)).padStart(8);
      console.log(`  ${label.padEnd(18)} ${name.replace(/_ms$/, '').padEnd(38)} ${cell(s?.median)} ${cell(s?.p90)} ${cell(s?.min)} ${cell(s?.max)}`);
    }
    console.log(`  ${label.padEnd(18)} first token before the model's reply ended: direct ${r.first_token_before_model_end.direct}, run ${r.first_token_before_model_end.run}, proxy ${r.first_token_before_model_end.proxy}`);
    for (const p of r.problems) console.log(`  ${label.padEnd(18)} problem: ${p}`);
  }
}
