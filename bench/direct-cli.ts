/**
 * The reference for the bridge's first-token bench: each CLI started by hand in the structured
 * streaming mode the bridge's stdio backend runs it in, with the same program, environment and
 * arguments (AgentProgram.launch: the sandbox HOME seeded, the private temp folder), talking its
 * protocol with no Switchboard code in between, timed from the spawn to the first piece of reply
 * text on its stdout.
 *
 * One row per CLI in DIRECT: how to start it and how to tell the first reply text in its output.
 * When a backend changes its mode, its row changes with it.
 */
import { spawn } from 'node:child_process';
import { PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { AgentProgram, type SessionLaunch } from '../src/drivers/agent-program.js';
import { CLAUDE_SESSION_ARGS, replyPiece } from '../src/drivers/claude-conversation.js';
import { askEverything } from '../src/drivers/acp-ask-all.js';
import { CODEX_APP_SERVER_ARGS, CODEX_THREAD_SETTINGS } from '../src/drivers/codex-conversation.js';
import { terminateProcessTree } from '../src/platform/index.js';
import type { AgentProfile } from '../src/agents/index.js';

type Json = Record<string, unknown>;

/** Writes one JSON line to the CLI's stdin. */
type Send = (message: Json) => void;

/** One CLI's structured mode, as the bridge runs it. */
interface DirectCommand {
  /** What the bridge's backend runs, in words (for the results). */
  mode: string;
  args(profile: AgentProfile, launch: SessionLaunch, prompt: string): { args: string[]; env?: Record<string, string> };
  /** Keep stdin open for a protocol (stream-json, ACP); otherwise it is closed at once. */
  stdin: boolean;
  /** A conversation, started once the process is spawned: what to write first. */
  start?(send: Send, cwd: string, prompt: string): void;
  /** Each JSON line of stdout: true once it carries reply text; `send` answers the protocol. */
  line(obj: Json, send: Send, cwd: string, prompt: string): boolean;
  /** The line that ends the turn (the process is then ended: a turn cut short could leave its HOME half written). */
  turnEnded(obj: Json): boolean;
}

const asRecord = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined);

/** ACP over stdio, as the ACP driver speaks it: initialize, session/new, session/prompt. */
const ACP_INITIALIZE = 1;
const ACP_NEW_SESSION = 2;
const ACP_PROMPT = 3;
/** codex app-server's requests, in the same way. */
const CODEX_INITIALIZE = 1;
const CODEX_THREAD = 2;
const CODEX_TURN = 3;

const acp: Omit<DirectCommand, 'mode'> = {
  stdin: true,
  args: (profile, launch) => {
    const ask = askEverything(profile.data.name, launch.env, launch.temp.dir);
    return { args: [...(profile.data.acp_args ?? []), ...launch.args, ...ask.args], env: ask.env };
  },
  start: (send) => send({ jsonrpc: '2.0', id: ACP_INITIALIZE, method: 'initialize', params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: { name: 'switchboard-bench', version: '0' } } }),
  line: (obj, send, cwd, prompt) => {
    if (obj.id === ACP_INITIALIZE && obj.result !== undefined) send({ jsonrpc: '2.0', id: ACP_NEW_SESSION, method: 'session/new', params: { cwd, mcpServers: [] } });
    if (obj.id === ACP_NEW_SESSION && obj.result !== undefined) {
      const sessionId = asRecord(obj.result)?.sessionId;
      send({ jsonrpc: '2.0', id: ACP_PROMPT, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: prompt }] } });
    }
    // A request of the agent's (a permission, a file read) is refused: the bench's reply is text only.
    if (obj.method !== undefined && obj.id !== undefined) send({ jsonrpc: '2.0', id: obj.id, error: { code: -32601, message: 'not handled by the bench' } });
    if (obj.method !== 'session/update') return false;
    const update = asRecord(asRecord(obj.params)?.update);
    const text = asRecord(update?.content)?.text;
    return update?.sessionUpdate === 'agent_message_chunk' && typeof text === 'string' && text !== '';
  },
  turnEnded: (obj) => obj.id === ACP_PROMPT && (obj.result !== undefined || obj.error !== undefined),
};

/** The structured mode of each CLI the bridge runs on stdio (src/drivers/conversation-drivers.ts). */
export const DIRECT: Record<string, DirectCommand> = {
  claude: {
    mode: 'claude -p stream-json in and out, --include-partial-messages',
    stdin: true,
    args: (_profile, launch) => ({ args: [...CLAUDE_SESSION_ARGS, ...launch.args] }),
    // The prompt at once; the bridge's session also sends an initialize request first and waits for it.
    start: (send, _cwd, prompt) => send({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: prompt }] }, parent_tool_use_id: null, session_id: '' }),
    line: (obj) => replyPiece(obj) !== undefined,
    turnEnded: (obj) => obj.type === 'result',
  },
  codex: {
    mode: 'codex app-server --disable plugins, thread set to ask before every act',
    stdin: true,
    args: (_profile, launch) => ({ args: [...CODEX_APP_SERVER_ARGS, ...launch.args] }),
    // As CodexConversationDriver: initialize, initialized, thread/start, turn/start (JSON-RPC lines without "jsonrpc").
    start: (send) => send({ method: 'initialize', id: CODEX_INITIALIZE, params: { clientInfo: { name: 'switchboard-bench', title: null, version: '0' }, capabilities: { experimentalApi: false } } }),
    line: (obj, send, cwd, prompt) => {
      if (obj.id === CODEX_INITIALIZE && obj.result !== undefined) {
        send({ method: 'initialized' });
        send({ method: 'thread/start', id: CODEX_THREAD, params: { cwd, ...CODEX_THREAD_SETTINGS } });
      }
      if (obj.id === CODEX_THREAD && obj.result !== undefined) {
        const threadId = asRecord(asRecord(obj.result)?.thread)?.id;
        send({ method: 'turn/start', id: CODEX_TURN, params: { threadId, input: [{ type: 'text', text: prompt, text_elements: [] }], approvalPolicy: CODEX_THREAD_SETTINGS.approvalPolicy } });
      }
      // An approval (none in the bench's text-only reply) is declined.
      if (obj.method !== undefined && obj.id !== undefined) send({ id: obj.id, result: { decision: 'decline' } });
      const delta = asRecord(obj.params)?.delta;
      return obj.method === 'item/agentMessage/delta' && typeof delta === 'string' && delta !== '';
    },
    turnEnded: (obj) => obj.method === 'turn/completed' || (obj.id === CODEX_TURN && obj.error !== undefined),
  },
  gemini: { mode: 'gemini --acp', ...acp },
  opencode: { mode: 'opencode acp', ...acp },
};

/** When the first reply text came, and when the turn's process was done with. */
export interface DirectResult {
  /** Wall-clock ms (performance.timeOrigin + performance.now()) of the spawn and of the first reply text read. */
  startedAt: number;
  firstTextAt: number | undefined;
  problem?: string;
}

const now = (): number => performance.timeOrigin + performance.now();

/**
 * Starts `cli` directly, sends `prompt`, notes when its first reply text is read, and resolves once
 * the turn has ended (its process tree ended then), it exited, or `timeoutMs` passed.
 */
export async function runDirect(cli: string, program: AgentProgram, options: { cwd: string; sandbox: { home: string; modelUrl: string }; prompt: string; timeoutMs: number }): Promise<DirectResult> {
  const command = DIRECT[cli];
  if (!command) throw new Error(`no direct command for ${cli}`);
  const launch = program.launch({ cwd: options.cwd, sandbox: options.sandbox });
  const marker = { name: 'SWITCHBOARD_BENCH_DIRECT', value: `${process.pid}-${cli}-${Math.random().toString(36).slice(2)}` };
  try {
    const { args, env } = command.args(program.profile, launch, options.prompt);
    const startedAt = now();
    const child = spawn(launch.binary, args, { cwd: options.cwd, env: { ...launch.env, ...env, PWD: options.cwd, [marker.name]: marker.value }, stdio: [command.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], detached: true });
    child.stdin?.on('error', () => undefined);
    const send: Send = (message) => {
      child.stdin?.write(`${JSON.stringify(message)}\n`);
    };
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-2_000)));
    let firstTextAt: number | undefined;
    const problem = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(`the turn did not end within ${options.timeoutMs} ms`), options.timeoutMs);
      let partial = '';
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) {
          let obj: Json | undefined;
          try {
            obj = asRecord(JSON.parse(line));
          } catch {
            continue;
          }
          if (!obj) continue;
          if (command.line(obj, send, options.cwd, options.prompt)) firstTextAt ??= now();
          if (command.turnEnded(obj)) {
            clearTimeout(timer);
            resolve(undefined);
            return;
          }
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        resolve(firstTextAt === undefined ? `${cli} exited (${signal ?? String(code)}) before its turn ended; stderr: ${stderr.trim().slice(-500)}` : undefined);
      });
      command.start?.(send, options.cwd, options.prompt);
    });
    await terminateProcessTree(child.pid ?? -1, { marker, graceMs: 2_000 });
    const result: DirectResult = { startedAt, firstTextAt };
    if (firstTextAt === undefined) result.problem = problem ?? 'the turn ended with no reply text';
    return result;
  } finally {
    launch.temp.release();
  }
}
