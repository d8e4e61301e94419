/**
 * What Switchboard's MCP server needs from the daemon: the operations behind its tools, in the
 * words of the wire (snake_case, plain data). The daemon implements it over its services (phase 2:
 * `Services` in api/, with the caller's grant, so `send` and `ask` go through the same scopes and
 * risk rules as send_text and send_prompt on every other surface); tests implement it in memory.
 * Methods throw SwitchboardError with a stable code; the server turns that into a tool error.
 */

/** One pane as list_agents shows it. */
export interface McpAgentInfo {
  pane_id: string;
  /** The agent profile's name (claude, codex, …), or null for a plain program. */
  agent: string | null;
  /** idle, thinking, executing, waiting_approval, waiting_input, error, exited, starting. */
  state: string;
  folder: string;
  title: string;
  /** False when the pane is marked not askable. */
  askable: boolean;
}

/** An ask as the tools report it. */
export interface McpAskResult {
  ask_id: string;
  /** queued, typing, waiting, done, failed, timed_out, cancelled. */
  status: string;
  target: { pane_id: string; agent: string | null; title: string };
  reply: string | null;
  error: { code: string; message: string } | null;
}

export interface McpAskParams {
  target: string;
  question: string;
  /** Wait for the reply (default), or return the ask's id at once and have the reply delivered into the asker's pane. */
  wait: boolean;
  timeout_ms?: number;
}

export interface McpWaitParams {
  pane_id: string;
  /** Until the agent is idle, or until `pattern` shows on the screen. */
  until: 'idle' | 'pattern';
  pattern?: string;
  timeout_ms?: number;
}

export interface McpWaitResult {
  matched: boolean;
  state: string;
  /** The text that matched, for `pattern`. */
  match?: string;
}

export interface McpBackend {
  listAgents(): Promise<McpAgentInfo[]>;
  ask(params: McpAskParams): Promise<McpAskResult>;
  /** The ask now, or once it is final when `wait_ms` is given (at most that long). */
  askResult(params: { ask_id: string; wait_ms?: number }): Promise<McpAskResult>;
  /** Types text into a pane (Enter after it unless `enter` is false). */
  send(params: { pane_id: string; text: string; enter: boolean }): Promise<{ sent: true }>;
  /** The last `lines` lines of a pane's screen and history. */
  read(params: { pane_id: string; lines: number }): Promise<{ pane_id: string; text: string }>;
  wait(params: McpWaitParams): Promise<McpWaitResult>;
  /**
   * One of the team tools, for an agent of a team run (`team_tool`): the outcome as a marker line's
   * result carries it. Optional: a backend without it lists no team tools.
   */
  teamTool?(params: { tool: string; params: Record<string, unknown> }): Promise<McpTeamOutcome>;
}

/** A team tool's outcome. */
export type McpTeamOutcome = { ok: true; result: unknown } | { ok: false; error: { code: string; message: string } };
