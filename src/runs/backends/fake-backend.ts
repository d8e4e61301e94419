/**
 * A scripted backend with no CLI behind it, for tests, demos and the bench (as the scripted model
 * is for the CLIs): it answers a prompt by the words in it, with the entries a structured driver
 * would give, and asks governance about its tool calls the way a CLI's permission requests do.
 *
 * - `hello`: a text reply. `tool`: a shell command with its result, a file written (and its patch).
 * - `write outside <path>`: asks to write a file there (governance decides; nothing is written).
 * - `pieces <n>`: a reply streamed in n pieces, then given whole (`pieces <n> only`: never whole).
 * - `tokens <n>`: n text pieces. `chunks <n>x<size>`: n replies of `size` characters each (big events). `slow`: a reply after 60 s (a test cancels it first).
 * - `silent`: nothing at all until cancelled. `crash`: dies in the middle of the turn.
 * - `fail`: an error from the model.
 * - `person <ms>`: waits that long on a person (as a pane run at an approval nobody has answered yet), saying so, then replies.
 * - `conversation`: says its conversation id first (`fake-<thread>`), as a CLI says its own; a run
 *   that resumes one (DriverRunRequest.resume) always says the id it resumed.
 */
import { SCHEMA_VERSIONS } from '../../output/stream-events.js';
import type { NormalizedEntry } from '../../output/entry.js';
import type { RunMode } from '../../ledger/run-model.js';
import { agentSessionEvent } from '../../ledger/run-events.js';
import { StreamingBackend, type BackendCapabilities, type BackendHealth, type DriverOutcome, type DriverRun, type DriverRunRequest } from './backend-driver.js';

export interface FakeBackendOptions {
  name?: string;
  mode?: RunMode;
  /** A pause before each entry, in ms (default 0: the next turn of the event loop). */
  stepMs?: number;
  /** Whether it says it asks before it acts (default true), for the refusal of a backend that cannot. */
  permissionRequests?: boolean;
  /** A CLI that does not stop when its turn is interrupted (only a cancel ends it). */
  ignoresInterrupts?: boolean;
}

export class FakeBackend extends StreamingBackend {
  readonly name: string;
  readonly mode: RunMode;
  /** Runs going now, and the most at once so far. */
  running = 0;
  maxRunning = 0;
  /** Conversations opened (a follow-up reuses its parent's). */
  readonly threads = new Set<string>();
  /** Conversations open now (kept for a follow-up, or in a run), as a CLI's process would be. */
  readonly open = new Set<string>();
  /** The runs asked to stop their turn and keep the conversation, in order. */
  readonly interrupted: string[] = [];
  /** The conversation ids runs resumed, in order. */
  readonly resumed: string[] = [];

  constructor(private readonly options: FakeBackendOptions = {}) {
    super();
    this.name = options.name ?? 'fake';
    this.mode = options.mode ?? 'stdio';
  }

  capabilities(): BackendCapabilities {
    return { backend: this.name, mode: this.mode, format: 'fake', streaming: true, followUps: true, permissionRequests: this.options.permissionRequests ?? true, schemaVersions: SCHEMA_VERSIONS, resumes: true };
  }

  health(): Promise<BackendHealth> {
    return Promise.resolve({ ok: true, binary: null, version: '1.0.0', version_support: 'exact', model_reachable: null });
  }

  stream(request: DriverRunRequest): DriverRun {
    if (request.followUp && !this.open.has(request.thread)) throw new Error(`no conversation ${request.thread} open`);
    this.threads.add(request.thread);
    this.open.add(request.thread);
    const flags = { cancelled: false, interrupted: false };
    // A function, not the flag itself: the flag changes across awaits, which narrowing does not see.
    // An interrupted turn stops as a cancelled one does, but its conversation stays.
    const cancelled = (): boolean => flags.cancelled || flags.interrupted;
    let wake: () => void = () => undefined;
    const cancelledSignal = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const pause = (ms: number): Promise<void> => Promise.race([new Promise<void>((r) => setTimeout(r, ms)), cancelledSignal]);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    let n = 0;
    const entry = (type: NormalizedEntry['type'], content: string, metadata?: NormalizedEntry['metadata']): void => {
      request.emit({ kind: 'entry', entry: { id: `${request.runId}-${++n}`, type, timestamp: Date.now(), content, ...(metadata ? { metadata } : {}) } });
    };
    if (request.resume !== undefined) this.resumed.push(request.resume);
    const script = async (): Promise<DriverOutcome> => {
      const p = request.prompt;
      const step = (): Promise<void> => pause(this.options.stepMs ?? 0);
      if (request.resume !== undefined || /conversation/.test(p)) request.emit({ kind: 'event', event: agentSessionEvent(Date.now(), this.name, request.resume ?? `fake-${request.thread}`) });
      await step();
      if (cancelled()) return { status: 'cancelled', message: 'cancelled' };
      if (/silent|slow/.test(p)) {
        await pause(60_000);
        if (cancelled()) return { status: 'cancelled', message: 'cancelled' };
        entry('assistant_message', 'Finally done.');
        return { status: 'completed', message: 'end_turn' };
      }
      const person = /person (\d+)/.exec(p);
      if (person) {
        request.emit({ kind: 'waiting', on: true });
        await pause(Number(person[1]));
        if (cancelled()) return { status: 'cancelled', message: 'cancelled' };
        request.emit({ kind: 'waiting', on: false });
        entry('assistant_message', 'Answered, thank you.');
        return { status: 'completed', message: 'end_turn' };
      }
      if (/crash/.test(p)) {
        entry('assistant_message', 'Starting…');
        await step();
        entry('error', 'fake was ended by SIGKILL in the middle of the turn', { status: 'failed' });
        return { status: 'failed', reason: 'crashed', message: 'fake was ended by SIGKILL in the middle of the turn' };
      }
      if (/fail/.test(p)) {
        entry('error', 'scripted failure for the test', { status: 'failed' });
        return { status: 'failed', reason: 'agent_error', message: 'scripted failure for the test' };
      }
      const outside = /write outside (\S+)/.exec(p);
      if (outside) {
        const file = outside[1] as string;
        const { decision: answer } = await request.judge({ subject: { tool: 'file_write', path: file, toolName: 'Write' }, toolName: 'Write', input: { file_path: file }, toolCallId: 'w1' });
        entry('file_edit', file, { toolName: 'Write', toolCallId: 'w1', filePath: file, toolInput: { file_path: file } });
        await step();
        entry('tool_result', answer === 'allow' ? 'written' : 'denied by policy', { toolCallId: 'w1', toolName: 'Write', status: answer === 'allow' ? 'success' : 'failed' });
        entry('assistant_message', answer === 'allow' ? 'Wrote it.' : 'I was not allowed to write there.');
        return { status: 'completed', message: 'end_turn' };
      }
      // A reply streamed in pieces (one per step), then given whole, as a streaming CLI does.
      const pieces = /pieces (\d+)/.exec(p);
      if (pieces) {
        let whole = '';
        for (let i = 0; i < Number(pieces[1]); i++) {
          if (cancelled()) return { status: 'cancelled', message: 'cancelled' };
          request.emit({ kind: 'delta', text: `p${i} ` });
          whole += `p${i} `;
          await step();
        }
        // `pieces <n> only`: never given whole, as a CLI that only streams.
        if (!/pieces \d+ only/.test(p)) entry('assistant_message', whole);
        return { status: 'completed', message: 'end_turn' };
      }
      const chunks = /chunks (\d+)x(\d+)/.exec(p);
      if (chunks) {
        for (let i = 0; i < Number(chunks[1]); i++) {
          if (cancelled()) return { status: 'cancelled', message: 'cancelled' };
          entry('assistant_message', `${i} ${'c'.repeat(Number(chunks[2]))}`);
          await step();
        }
        return { status: 'completed', message: 'end_turn' };
      }
      const tokens = /tokens (\d+)/.exec(p);
      if (tokens) {
        for (let i = 0; i < Number(tokens[1]); i++) {
          if (cancelled()) return { status: 'cancelled', message: 'cancelled' };
          entry('assistant_message', `piece ${i} `);
          if (i % 100 === 99) await step();
        }
        return { status: 'completed', message: 'end_turn' };
      }
      if (/tool/.test(p)) {
        const command = 'echo hello-from-tool > tool_out.txt';
        const { decision: answer } = await request.judge({ subject: { tool: 'shell', command, toolName: 'Bash' }, toolName: 'Bash', input: { command }, toolCallId: 't1' });
        entry('command_run', command, { toolName: 'Bash', toolCallId: 't1', toolInput: { command } });
        await step();
        entry('tool_result', answer === 'allow' ? 'hello-from-tool' : 'denied', { toolCallId: 't1', toolName: 'Bash', status: answer === 'allow' ? 'success' : 'failed', exitCode: answer === 'allow' ? 0 : 1 });
        const { decision: write } = await request.judge({ subject: { tool: 'file_write', path: 'note.txt', toolName: 'Write' }, toolName: 'Write', input: { file_path: 'note.txt' }, toolCallId: 't2' });
        entry('file_edit', 'note.txt', { toolName: 'Write', toolCallId: 't2', filePath: 'note.txt', toolInput: { file_path: 'note.txt' } });
        await step();
        entry('tool_result', write === 'allow' ? 'written' : 'denied', { toolCallId: 't2', toolName: 'Write', status: write === 'allow' ? 'success' : 'failed' });
      }
      if (cancelled()) return { status: 'cancelled', message: 'cancelled' };
      entry('assistant_message', /tool/.test(p) ? 'Done: wrote tool_out.txt.' : 'Hello from the fake backend.');
      return { status: 'completed', message: 'end_turn' };
    };
    const done = script().finally(() => {
      this.running--;
      this.runs.delete(request.runId);
      // As a real conversation: kept for a follow-up when the run can have one, else closed with it.
      if (!flags.cancelled && request.keepIdle) request.keepIdle(() => Promise.resolve(void this.open.delete(request.thread)));
      else this.open.delete(request.thread);
    });
    const run: DriverRun = {
      done,
      cancel: async () => {
        flags.cancelled = true;
        wake();
        await done;
      },
      interrupt: async () => {
        this.interrupted.push(request.runId);
        if (this.options.ignoresInterrupts) return;
        flags.interrupted = true;
        wake();
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
