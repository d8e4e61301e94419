/**
 * A ConversationDriver over ACP, the Agent Client Protocol (Gemini CLI `--acp`, `opencode acp`):
 * Switchboard is the client, one agent process per session, JSON-RPC over its stdio through the
 * ACP SDK. Each prompt is a `session/prompt` in the same ACP session; what the agent says comes
 * as `session/update` notifications, turned into entries (output/normalize-acp.ts); each
 * `session/request_permission` is judged by the approval policy, then the caller's callback, else
 * denied, and answered with the option the agent offered for that decision.
 *
 * What the pinned CLIs do, found by running them against the scripted model:
 * - Neither needs `authenticate`. Gemini CLI 0.61 offers oauth-personal, gemini-api-key,
 *   vertex-ai and gateway, and opens a session with GEMINI_API_KEY in its environment (with or
 *   without `selectedType` in its settings); OpenCode 1.18 offers only "opencode-login" and uses
 *   the provider and model of its config (the sandbox's OPENCODE_CONFIG_CONTENT), which
 *   `session/new` reports as its current model.
 * - Neither needs the client's fs or terminal methods, so none are advertised. OpenCode still
 *   calls fs/write_text_file after an allowed edit; the SDK answers "method not found" and
 *   OpenCode has written the file itself by then.
 * - Gemini asks permission for every shell and write call in its default mode, with no
 *   `tool_call` update before the request and no input in it: the command is the title. OpenCode
 *   asks for bash and edit because the sandbox config says "ask".
 * - A model error is the answer to `session/prompt`: Gemini's code is the HTTP status with the
 *   API's JSON error as message; OpenCode's is -32603 "Internal error: <message>".
 * - `session/cancel` ends the turn with stopReason "cancelled" and the session goes on.
 * - Both advertise `agentCapabilities.loadSession` (Gemini CLI 0.61, OpenCode 1.18), so a session
 *   opened with `resume` is a `session/load`; see AcpSession.load for what is done with the
 *   history the agent replays.
 */
import { SwitchboardError } from '../core/errors.js';
import { SCHEMA_VERSIONS } from '../output/stream-events.js';
import { ASK_POLICY } from '../approvals/policy/index.js';
import type { HeadlessDriverOptions } from './headless-driver.js';
import type { AgentCapabilities, AgentHealth } from './capabilities.js';
import type { Conversation, ConversationOptions, ConversationDriver } from './conversation.js';
import { AgentProgram } from './agent-program.js';
import { askEverything } from './acp-ask-all.js';
import { resumeIdOf } from './conversation-turn.js';

/**
 * As the headless driver's options (the profile must have `acp_args`; a session's own sandbox,
 * variables and arguments go on top of these), plus what only ACP has.
 */
export interface AcpDriverOptions extends HeadlessDriverOptions {
  /** Sees every JSON-RPC message on the agent's stdio, both ways: protocol logs, recorded fixtures. */
  onMessage?: (direction: 'to_agent' | 'from_agent', message: unknown) => void;
  /** How long the agent may take to start and open its session (default 120 s: a loaded machine). */
  startTimeoutMs?: number;
}

const DEFAULT_START_TIMEOUT_MS = 120_000;

export class AcpDriver implements ConversationDriver {
  private readonly program: AgentProgram;

  constructor(private readonly options: AcpDriverOptions) {
    this.program = new AgentProgram(options.tool, { catalog: options.catalog, binaryDirs: options.binaryDirs });
    if (!this.program.profile.data.acp_args) throw new SwitchboardError('INVALID_PARAMS', `${options.tool} has no ACP mode in its profile (acp_args)`, { agent: options.tool });
  }

  get name(): string {
    return this.program.name;
  }

  capabilities(): AgentCapabilities {
    return { format: 'acp', streaming: true, followUps: true, permissionRequests: true, schemaVersions: SCHEMA_VERSIONS };
  }

  health(): Promise<AgentHealth> {
    return this.program.health();
  }

  /** Starts the agent, initializes ACP and opens a session in `cwd`; resolves once it takes prompts. */
  async open(options: ConversationOptions): Promise<Conversation> {
    if (options.signal?.aborted) throw new SwitchboardError('INVALID_REQUEST', 'the session was aborted before it opened');
    const resume = resumeIdOf(options);
    const sandbox = options.sandbox ?? this.options.sandbox;
    // The driver's own settings first, the session's on top (its variables win, its arguments go last).
    const launch = this.program.launch({ ...options, sandbox, env: { ...this.options.env, ...options.env }, args: [...(this.options.args ?? []), ...(options.args ?? [])] });
    // A spawn refused at once (a NUL in an argument or a variable) leaves no folder behind.
    // The ACP SDK and its schemas are loaded by the first session, not by every daemon (about 3 MiB).
    const { AcpSession } = await import('./acp-session.js');
    const session = launch.temp.guard(() => {
      // The agent asks before every tool call, so that the policy decides before the act (acp-ask-all.ts).
      const ask = askEverything(this.options.tool, launch.env, launch.temp.dir);
      return new AcpSession({
        name: this.name,
        binary: launch.binary,
        args: [...(this.program.profile.data.acp_args ?? []), ...launch.args, ...ask.args],
        env: { ...launch.env, ...ask.env },
        temp: launch.temp,
        cwd: options.cwd,
        policy: options.policy ?? ASK_POLICY,
        onPermission: options.onPermission,
        judge: options.judge,
        // `~` in a command is the agent's HOME: the sandbox's when there is one.
        home: sandbox?.home,
        store: options.store ?? this.options.store,
        onMessage: this.options.onMessage,
        signal: options.signal,
        resume,
      });
    });
    await session.start(this.options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
    return session;
  }
}
