/**
 * The `shell` backend: a run's prompt is a command line, run by the user's shell (`$SHELL -c` on
 * POSIX, PowerShell `-Command` on Windows) in the run's folder. A shell has no turn to end and no
 * screen that says it is done, so driving one as an agent (the PTY backend did) never completed;
 * here the command's exit ends the run: 0 is `completed`, anything else `failed (agent_error)` with
 * the code or signal in the message.
 *
 * The command is put to governance before it runs, as the shell tool call it is, so the policy's
 * command rules and blocklist hold for it exactly as for an agent's. Its output (stdout and stderr
 * in the order they arrive) streams as the run's `token` events while it runs. There is no
 * conversation: a follow-up is refused at submit (capabilities say `followUps: false`).
 */
import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { defaultShell, shellCommandLine, terminateProcessTree } from '../../platform/index.js';
import { SCHEMA_VERSIONS } from '../../output/stream-events.js';
import { StreamingBackend, type BackendCapabilities, type BackendHealth, type DriverOutcome, type DriverRun, type DriverRunRequest } from './backend-driver.js';

export const SHELL_BACKEND = 'shell';
/** The variable every process of a bridge run carries with the run's conversation (run-service.ts). */
const RUN_MARKER_VARIABLE = 'SWITCHBOARD_BRIDGE_RUN';
/** How long a cancelled command gets to end on HUP/TERM before KILL. */
const CANCEL_GRACE_MS = 2_000;

export interface CommandBackendOptions {
  /** Variables added to every command's environment. */
  env?: Record<string, string>;
}

type CommandState = { phase: 'judging' } | { phase: 'running'; pid: number } | { phase: 'ended' };

export class CommandBackend extends StreamingBackend {
  readonly name = SHELL_BACKEND;
  readonly mode = 'stdio' as const;

  constructor(private readonly options: CommandBackendOptions = {}) {
    super();
  }

  capabilities(): BackendCapabilities {
    return { backend: this.name, mode: 'stdio', format: 'command', streaming: true, followUps: false, permissionRequests: true, schemaVersions: SCHEMA_VERSIONS };
  }

  health(): Promise<BackendHealth> {
    try {
      const shell = defaultShell(process.env);
      return Promise.resolve({ ok: true, binary: shell.file, version: null, version_support: null, model_reachable: null });
    } catch (err) {
      return Promise.resolve({ ok: false, binary: null, version: null, version_support: null, model_reachable: null, problem: (err as Error).message });
    }
  }

  stream(request: DriverRunRequest): DriverRun {
    let state: CommandState = { phase: 'judging' };
    let cancelled = false;
    const done = this.execute(request, (next) => (state = next), () => cancelled).finally(() => {
      state = { phase: 'ended' };
      this.runs.delete(request.runId);
    });
    const run: DriverRun = {
      done,
      cancel: async () => {
        cancelled = true;
        if (state.phase === 'running') await terminateProcessTree(state.pid, { graceMs: CANCEL_GRACE_MS, marker: { name: RUN_MARKER_VARIABLE, value: request.thread } });
        await done.catch(() => undefined);
      },
    };
    this.runs.set(request.runId, run);
    return run;
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.runs.values()].map((r) => r.cancel()));
  }

  private async execute(request: DriverRunRequest, setState: (s: CommandState) => void, isCancelled: () => boolean): Promise<DriverOutcome> {
    const command = request.prompt;
    const toolCallId = `${request.runId}-command`;
    const { decision: verdict } = await request.judge({ subject: { tool: 'shell', command, toolName: SHELL_BACKEND }, toolName: SHELL_BACKEND, input: { command }, toolCallId });
    if (isCancelled()) return { status: 'cancelled', message: 'cancelled before the command ran' };
    if (verdict === 'deny') return { status: 'failed', reason: 'policy', message: `the policy refused the command: ${command}` };
    const env = { ...process.env, ...this.options.env, ...request.env, PWD: request.cwd };
    const line = shellCommandLine(command, env);
    return new Promise<DriverOutcome>((resolve) => {
      // Its own process group (POSIX), so that a cancel ends everything the command started.
      const child = spawn(line.file, line.args, { cwd: request.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32', windowsHide: true });
      if (child.pid !== undefined) setState({ phase: 'running', pid: child.pid });
      let seq = 0;
      const forward = (decoder: StringDecoder) => (chunk: Buffer) => {
        const text = decoder.write(chunk);
        if (text !== '') request.emit({ kind: 'entry', entry: { id: `${request.runId}-out-${++seq}`, type: 'assistant_message', timestamp: Date.now(), content: text } });
      };
      const outDecoder = new StringDecoder('utf8');
      const errDecoder = new StringDecoder('utf8');
      child.stdout.on('data', forward(outDecoder));
      child.stderr.on('data', forward(errDecoder));
      child.once('error', (err) => resolve({ status: 'failed', reason: 'spawn_failed', message: `could not start ${line.file}: ${err.message}` }));
      // 'close': both pipes are drained, so no output is lost.
      child.once('close', (code, signal) => {
        for (const rest of [outDecoder.end(), errDecoder.end()]) if (rest !== '') request.emit({ kind: 'entry', entry: { id: `${request.runId}-out-${++seq}`, type: 'assistant_message', timestamp: Date.now(), content: rest } });
        if (isCancelled()) resolve({ status: 'cancelled', message: 'cancelled' });
        else if (code === 0) resolve({ status: 'completed', message: 'exit 0' });
        else resolve({ status: 'failed', reason: 'agent_error', message: signal !== null ? `the command was ended by ${signal}` : `the command exited with ${String(code)}` });
      });
    });
  }
}
