/**
 * The MCP tools over Switchboard's own methods: whatever carries the calls (the client library
 * from `switchboard mcp` on stdio, the dispatcher with the caller's grant on the daemon's HTTP
 * port), each tool is one or two JSON-RPC methods, so scopes, limits and risk rules are the same
 * as on every other surface. A waiting ask is an ask plus short waits until it is final, so no
 * single call is held open for minutes.
 */
import { SwitchboardError } from '../../core/errors.js';
import type { AskInfo, ParamsInput, Result } from '../../protocol/methods.js';
import type { PortMethod } from '../../api/index.js';
import type { McpAgentInfo, McpAskParams, McpAskResult, McpBackend, McpTeamOutcome, McpWaitParams, McpWaitResult } from './backend.js';

/** Calls one method of the daemon (throws SwitchboardError with the method's stable code). */
export type RpcCall = <M extends PortMethod>(method: M, params: ParamsInput<M>) => Promise<Result<M>>;

/** Who asks through this server (the pane the agent runs in, when it runs in one). */
export interface McpAsker {
  paneId?: string;
  cwd?: string;
  name?: string;
}

/** Each wait call holds the daemon this long at most; a longer wait is several. */
const WAIT_STEP_MS = 30_000;
/** How often `wait until=idle` looks at the agent's state. */
const IDLE_POLL_MS = 200;
const FINAL = new Set(['done', 'failed', 'timed_out', 'cancelled']);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function toAskResult(a: AskInfo): McpAskResult {
  return { ask_id: a.ask_id, status: a.status, target: a.target, reply: a.reply, error: a.error };
}

export class RpcMcpBackend implements McpBackend {
  constructor(
    private readonly call: RpcCall,
    private readonly asker: McpAsker = {},
  ) {}

  async listAgents(): Promise<McpAgentInfo[]> {
    const { targets } = await this.call('ask_targets', {});
    return targets.map((t) => ({ pane_id: t.pane_id, agent: t.agent, state: t.state, folder: t.folder, title: t.title, askable: t.askable }));
  }

  async ask(params: McpAskParams): Promise<McpAskResult> {
    const asked = await this.call('ask', {
      target: params.target,
      question: params.question,
      wait: false,
      // Waiting here means the reply comes back in this call: never typed into the asker's pane too.
      deliver: !params.wait,
      timeout_ms: params.timeout_ms,
      from_pane_id: this.asker.paneId,
      cwd: this.asker.cwd,
      from_name: this.asker.name,
    });
    if (!params.wait) return toAskResult(asked);
    return toAskResult(await this.untilFinal(asked));
  }

  async askResult(params: { ask_id: string; wait_ms?: number }): Promise<McpAskResult> {
    if (params.wait_ms === undefined) return toAskResult(await this.call('ask_get', { ask_id: params.ask_id }));
    const deadline = Date.now() + params.wait_ms;
    let ask = await this.call('ask_get', { ask_id: params.ask_id });
    while (!FINAL.has(ask.status) && Date.now() < deadline) {
      ask = await this.call('ask_wait', { ask_id: params.ask_id, timeout_ms: Math.min(WAIT_STEP_MS, deadline - Date.now()) });
    }
    return toAskResult(ask);
  }

  async send(params: { pane_id: string; text: string; enter: boolean }): Promise<{ sent: true }> {
    await this.call('send_text', { pane_id: params.pane_id, text: params.text, add_newline: params.enter });
    return { sent: true };
  }

  async read(params: { pane_id: string; lines: number }): Promise<{ pane_id: string; text: string }> {
    const { text } = await this.call('get_text', { pane_id: params.pane_id, lines: params.lines });
    return { pane_id: params.pane_id, text };
  }

  async wait(params: McpWaitParams): Promise<McpWaitResult> {
    const timeoutMs = params.timeout_ms ?? 60_000;
    if (params.until === 'pattern') {
      const waited = await this.call('wait_for', { pane_id: params.pane_id, pattern: params.pattern, timeout_ms: timeoutMs });
      return { matched: waited.matched, state: await this.stateOf(params.pane_id, true), ...(waited.match !== undefined ? { match: waited.match } : {}) };
    }
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const state = await this.stateOf(params.pane_id);
      if (state === 'idle') return { matched: true, state };
      if (state === 'exited' || Date.now() >= deadline) return { matched: false, state };
      await sleep(Math.min(IDLE_POLL_MS, Math.max(1, deadline - Date.now())));
    }
  }

  /** A team tool, as the pane this server runs for (`team_tool` with its token). */
  async teamTool(params: { tool: string; params: Record<string, unknown> }): Promise<McpTeamOutcome> {
    return await this.call('team_tool', params);
  }

  /**
   * The agent's state in a pane; for a pane with no agent `running` when `anyPane`, else
   * NOT_AN_AGENT; PANE_NOT_FOUND for no pane.
   */
  private async stateOf(paneId: string, anyPane = false): Promise<string> {
    const { targets } = await this.call('ask_targets', {});
    const found = targets.find((t) => t.pane_id === paneId);
    if (found) return found.state;
    const alive = await this.call('is_alive', { pane_id: paneId });
    // is_alive answers an unknown pane `{alive: false}` with nothing else; an exited one says how it ended.
    if (!alive.alive && alive.exit_code === undefined) throw new SwitchboardError('PANE_NOT_FOUND', `no pane ${paneId}`, { pane_id: paneId });
    if (!alive.alive) return 'exited';
    if (anyPane) return 'running';
    throw new SwitchboardError('NOT_AN_AGENT', `pane ${paneId} runs no agent: wait for a pattern instead`, { pane_id: paneId });
  }

  private async untilFinal(ask: AskInfo): Promise<AskInfo> {
    let now = ask;
    while (!FINAL.has(now.status)) now = await this.call('ask_wait', { ask_id: now.ask_id, timeout_ms: WAIT_STEP_MS });
    return now;
  }
}
