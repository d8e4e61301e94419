/**
 * An agent CLI's headless mode as a backend of the run service: one process per run (`claude -p …
 * --output-format stream-json`, `codex exec --json`, `gemini -p … --output-format stream-json`,
 * `opencode run --format json`), its entries reported as they come. It cannot be followed up, and
 * it cannot ask before it acts (the CLI's own flags decide its tools), so the run service takes it
 * only for a face whose caller governs the run (seed 001's `run_agent`, `runs/structured-runs.ts`).
 * The run's id is the process tree's SWITCHBOARD_RUN_ID; cancelling ends that tree.
 */
import type { AgentCatalog } from '../../agents/index.js';
import { HeadlessDriver, type RunResult } from '../../drivers/headless-driver.js';
import { StreamingBackend, type BackendCapabilities, type BackendHealth, type DriverOutcome, type DriverRun, type DriverRunRequest } from './backend-driver.js';

export interface HeadlessBackendOptions {
  tool: string;
  catalog: AgentCatalog;
  sandbox?: { home: string; modelUrl: string };
  /** Arguments for the CLI after the profile's headless ones: the caller's (`--allowedTools Bash`). */
  args?: string[];
}

export class HeadlessBackend extends StreamingBackend {
  readonly mode = 'stdio' as const;
  private readonly driver: HeadlessDriver;

  constructor(options: HeadlessBackendOptions) {
    super();
    this.driver = new HeadlessDriver({ tool: options.tool, catalog: options.catalog, ...(options.sandbox ? { sandbox: options.sandbox } : {}), ...(options.args ? { args: options.args } : {}) });
  }

  get name(): string {
    return this.driver.name;
  }

  capabilities(): BackendCapabilities {
    return { backend: this.name, mode: 'stdio', ...this.driver.capabilities() };
  }

  async health(): Promise<BackendHealth> {
    const h = await this.driver.health();
    return { ...h, version_support: null, model_reachable: null };
  }

  stream(request: DriverRunRequest): DriverRun {
    const handle = this.driver.stream(request.prompt, { cwd: request.cwd, runId: request.runId, env: request.env });
    // Every entry is reported before the run ends (the store finishes before `done` resolves).
    const reported = new Promise<void>((resolve) => {
      handle.entries.subscribe(
        (batch) => {
          for (const { msg } of batch) request.emit({ kind: 'entry', entry: msg });
        },
        { onFinished: () => resolve() },
      );
    });
    const done = Promise.all([handle.done, reported]).then(([result]) => {
      this.runs.delete(request.runId);
      return outcomeOf(result);
    });
    const run: DriverRun = {
      done,
      cancel: async () => {
        this.driver.cancel(handle.runId);
        await done;
      },
    };
    this.runs.set(request.runId, run);
    return run;
  }

  async dispose(): Promise<void> {
    await Promise.all([...this.runs.values()].map((r) => r.cancel()));
  }
}

/** How a headless process ended, as the run service records it: its stderr's end says why it failed. */
function outcomeOf(result: RunResult): DriverOutcome {
  if (result.status === 'completed') return { status: 'completed', message: 'the agent ended its turn' };
  if (result.status === 'cancelled') return { status: 'cancelled', message: 'cancelled' };
  const said = result.stderrTail.trim();
  const how = result.exitCode !== null ? `exit code ${result.exitCode}` : result.signal !== null ? `signal ${result.signal}` : 'no exit code';
  const reported = result.entries.some((e) => e.type === 'error');
  const reason = result.exitCode === null && result.signal === null ? 'spawn_failed' : reported || result.exitCode === 0 ? 'agent_error' : 'crashed';
  return { status: 'failed', reason, message: said !== '' ? said : `${reported ? 'the agent reported an error' : 'the agent exited'} (${how})` };
}
