/**
 * An agent CLI's structured headless mode, stdio first: one process per
 * run (`claude -p … --output-format stream-json`, `codex exec --json`, `gemini -p …
 * --output-format stream-json`, `opencode run --format json`), its stdout read line by line into
 * normalized entries, which go into the run's MsgStore as they come (history plus live for any
 * number of readers). `cancel` ends the run's whole process tree.
 *
 * What this driver does not do yet (issue 5): multi-turn sessions through stream-json input and
 * ACP, and permission requests answered by the approval policy. Tools run as the CLI's own flags
 * allow (`args`: `--allowedTools Bash`, `--yolo`, `--auto`).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { SwitchboardError } from '../core/errors.js';
import { AgentCatalog, agentVersion, createPrivateTemp, defaultBinaryDirs, findAgentBinary, headlessAgentEnv, type AgentProfile, type PrivateTemp } from '../agents/index.js';
import type { NormalizedEntry, Normalizer } from '../output/entry.js';
import { MsgStore, type MsgStoreOptions } from '../output/msg-store.js';
import { ClaudeStreamJsonNormalizer } from '../output/normalize-claude.js';
import { CodexExecJsonNormalizer } from '../output/normalize-codex.js';
import { GeminiStreamJsonNormalizer } from '../output/normalize-gemini.js';
import { OpenCodeJsonNormalizer } from '../output/normalize-opencode.js';
import { PlainTextNormalizer } from '../output/normalize-plain.js';
import { SCHEMA_VERSIONS } from '../output/stream-events.js';
import type { AgentCapabilities, AgentHealth, EndStatus } from './capabilities.js';
import { terminateProcessTree } from '../platform/index.js';

export interface RunOptions {
  cwd: string;
  signal?: AbortSignal;
  /** The run's id (its processes carry it as SWITCHBOARD_RUN_ID); default: a new one. */
  runId?: string;
  /** Variables the run's processes carry besides the profile's (a run service's markers). */
  env?: Record<string, string>;
}

export interface RunResult {
  runId: string;
  status: EndStatus;
  exitCode: number | null;
  signal: string | null;
  entries: NormalizedEntry[];
  /** Lines that could not be read (they are in `entries` as raw). */
  unparsed: number;
  /** The end of what the CLI wrote to stderr (for a failed run). */
  stderrTail: string;
  durationMs: number;
}

/** A run under way: its entries as they come, and its end. */
export interface RunHandle {
  runId: string;
  entries: MsgStore<NormalizedEntry>;
  done: Promise<RunResult>;
}

export interface HeadlessDriverOptions {
  tool: string;
  catalog?: AgentCatalog;
  /** Run from this isolated HOME against a model server (tests, demos). */
  sandbox?: { home: string; modelUrl: string };
  /** Arguments after the profile's headless ones (and before the prompt's own position). */
  args?: string[];
  env?: Record<string, string>;
  binaryDirs?: string[];
  store?: MsgStoreOptions<NormalizedEntry>;
}

const STDERR_TAIL_BYTES = 4_096;
const CANCEL_GRACE_MS = 2_000;

/** The normalizer for a profile's headless output; plain text for CLIs without a structured mode. */
function normalizerFor(tool: string): Normalizer {
  switch (tool) {
    case 'claude':
      return new ClaudeStreamJsonNormalizer();
    case 'codex':
      return new CodexExecJsonNormalizer();
    case 'gemini':
      return new GeminiStreamJsonNormalizer();
    case 'opencode':
      return new OpenCodeJsonNormalizer();
    default:
      return new PlainTextNormalizer(tool);
  }
}

export class HeadlessDriver {
  private readonly profile: AgentProfile;
  /** Where each run's private temporary folder is made: the catalog's home. */
  private readonly tempRoot: string;
  private readonly running = new Map<string, { pid: number; cancel: () => void }>();

  constructor(private readonly options: HeadlessDriverOptions) {
    const catalog = options.catalog ?? AgentCatalog.load();
    this.profile = catalog.get(options.tool);
    this.tempRoot = catalog.tempRoot;
    if (!this.profile.data.headless_args) throw new SwitchboardError('INVALID_PARAMS', `${options.tool} has no headless mode in its profile`, { agent: options.tool });
  }

  get name(): string {
    return this.profile.data.name;
  }

  capabilities(): AgentCapabilities {
    return { format: normalizerFor(this.name).format, streaming: true, followUps: false, permissionRequests: false, schemaVersions: SCHEMA_VERSIONS };
  }

  async health(): Promise<AgentHealth> {
    const env = this.environment(process.cwd()).env;
    const binary = this.binary(env);
    if (!binary) return { ok: false, binary: null, version: null, problem: `${this.name} not found on PATH` };
    const version = await agentVersion(binary, this.profile.data.version_args ?? ['--version'], env, { npmPackage: this.profile.data.binary.npm_package, tempRoot: this.tempRoot });
    return version ? { ok: true, binary, version } : { ok: false, binary, version: null, problem: `${binary} did not say its version` };
  }

  /** Runs `prompt` to its end; the entries are in the result. */
  async run(prompt: string, options: RunOptions): Promise<RunResult> {
    return this.stream(prompt, options).done;
  }

  /** Starts a run; its entries arrive in the handle's MsgStore while it goes. */
  stream(prompt: string, options: RunOptions): RunHandle {
    if (prompt.trim() === '') throw new SwitchboardError('INVALID_PARAMS', 'the prompt is empty');
    options.signal?.throwIfAborted();
    const runId = options.runId ?? `r${randomBytes(4).toString('hex')}`;
    const temp = createPrivateTemp(this.tempRoot);
    const { env, args: extraArgs, binary } = temp.guard(() => {
      const environment = this.environment(options.cwd, temp);
      const found = this.binary(environment.env);
      if (!found) throw new SwitchboardError('SPAWN_FAILED', `${this.name} not found: install it so that ${this.profile.data.binary.names.join(' or ')} is on PATH`, { agent: this.name });
      return { ...environment, binary: found };
    });
    const headless = this.profile.data.headless_args ?? [];
    // Added arguments go last: before the prompt they could take it as their value (`-p` needs
    // one in Gemini; Claude's `--allowedTools` takes every word that follows).
    const args = [...headless.map((a) => (a === '{prompt}' ? prompt : a)), ...(headless.includes('{prompt}') ? [] : [prompt]), ...extraArgs, ...(this.options.args ?? [])];
    const store = new MsgStore<NormalizedEntry>(this.options.store);
    const normalizer = normalizerFor(this.name);
    const started = performance.now();
    // stdin closed: Codex reads a prompt from a stdin that is not a TTY. Its own process group, so
    // that cancelling ends everything the CLI started.
    // PWD too: OpenCode takes its project folder from $PWD, not from the process's cwd.
    // A spawn refused at once (a NUL in an argument or a variable) leaves no folder behind.
    const child = temp.guard(() => spawn(binary, args, { cwd: options.cwd, env: { ...env, ...options.env, PWD: options.cwd, SWITCHBOARD_RUN_ID: runId }, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32', windowsHide: true }));
    let cancelled = false;
    let stderr = '';
    let partial = '';
    const emit = (entries: NormalizedEntry[]): void => {
      for (const entry of entries) store.push(entry);
    };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) emit(normalizer.line(line.replace(/\r$/, '')));
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL_BYTES);
    });
    // A cancel's end of the whole tree: the run is done only once it is over, not when the root
    // exits (Codex's native binary outlives its Node launcher by a moment).
    let terminating: Promise<unknown> = Promise.resolve();
    const cancel = (): void => {
      if (cancelled || child.exitCode !== null || child.pid === undefined) return;
      cancelled = true;
      terminating = terminateProcessTree(child.pid, { graceMs: CANCEL_GRACE_MS, marker: { name: 'SWITCHBOARD_RUN_ID', value: runId } }).catch(() => undefined);
    };
    options.signal?.addEventListener('abort', cancel);
    if (child.pid !== undefined) this.running.set(runId, { pid: child.pid, cancel });
    const done = new Promise<RunResult>((resolve) => {
      const finish = (exitCode: number | null, signal: string | null, spawnError?: Error): void => {
        options.signal?.removeEventListener('abort', cancel);
        this.running.delete(runId);
        if (partial !== '') emit(normalizer.line(partial));
        partial = '';
        emit(normalizer.end?.() ?? []);
        const entries = store.history().map((m) => m.msg);
        const failedEntry = entries.some((e) => e.type === 'error');
        const status: EndStatus = cancelled ? 'cancelled' : spawnError || exitCode !== 0 || failedEntry ? 'failed' : 'completed';
        store.finish();
        temp.release();
        const result: RunResult = { runId, status, exitCode, signal, entries, unparsed: normalizer.unparsed, stderrTail: spawnError ? spawnError.message : stderr, durationMs: Math.round(performance.now() - started) };
        void terminating.then(() => resolve(result));
      };
      child.once('error', (err) => finish(null, null, err));
      // 'close': stdout is drained too, so no line is lost.
      child.once('close', (code, signal) => finish(code, signal));
    });
    return { runId, entries: store, done };
  }

  /** Ends a run and everything it started; false when no such run is going. */
  cancel(runId: string): boolean {
    const run = this.running.get(runId);
    if (!run) return false;
    run.cancel();
    return true;
  }

  private binary(env: NodeJS.ProcessEnv): string | undefined {
    return this.profile.resolveBinary?.(env) ?? findAgentBinary(this.profile.data, env, this.options.binaryDirs ?? defaultBinaryDirs(env));
  }

  /** The run's environment: the agent rules for a process without a terminal (src/agents/environment/agent-env.ts). */
  private environment(cwd: string, temp?: PrivateTemp): { env: Record<string, string>; args: string[] } {
    return headlessAgentEnv(this.profile, { cwd, sandbox: this.options.sandbox, ...(temp ? { temp } : {}), extra: this.options.env });
  }
}
