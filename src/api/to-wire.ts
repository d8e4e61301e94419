/**
 * Domain to wire, in one place: how panes, screens, agent states, approvals, sessions and turns
 * look in the results and notifications of every surface (src/protocol/methods/*.ts has the
 * shapes). Operations and subscriptions call these; nothing else builds a wire shape by hand.
 */
import type { AgentProfile, AgentStart, ApprovalPrompt } from '../agents/index.js';
import type { StateChange } from '../contract/agent-state.js';
import type { ApprovalInfo } from '../contract/approval.js';
import type { SessionTurn } from '../runs/index.js';
import type { SessionSummary } from '../logs/index.js';
import type { Pane, ScreenSnapshot, WaitResult } from '../pane/index.js';
import type { InputModesInfo, Notifications, PaneInfo, Result, SessionInfo } from '../protocol/methods.js';
import type { AskRecord, AskTargetInfo as AskTargetRecord } from '../asks/index.js';
import type { AskInfo, AskTargetInfo } from '../protocol/methods.js';
import type { TmuxFrontEnd } from './services.js';

/** A pane as listed over the wire; `tmux` where the tmux front end placed it. */
export function paneInfo(pane: Pane, tmux?: PaneInfo['tmux']): PaneInfo {
  const info: PaneInfo = {
    pane_id: pane.id,
    title: pane.title,
    alive: pane.alive,
    cwd: pane.cwd,
    command: pane.commandText,
    cols: pane.cols,
    rows: pane.rows,
    created_at: pane.createdAt.toISOString(),
    window_title: pane.windowTitle,
  };
  if (pane.alive) info.pid = pane.pid;
  if (pane.agent) info.agent = { name: pane.agent.name, version: pane.agent.version ?? null };
  if (tmux) info.tmux = tmux;
  const exit = pane.exit;
  if (exit) {
    info.exit_code = exit.exitCode;
    info.signal = exit.signal;
    const at = pane.exitTime;
    if (at) info.exited_at = at.toISOString();
  }
  return info;
}

/** Where the tmux front end placed a pane, for listings (undefined for panes it did not make). */
export function tmuxPlacement(tmux: TmuxFrontEnd, paneId: string): PaneInfo['tmux'] {
  const found = tmux.paneOf(paneId);
  if (!found) return undefined;
  const { runtime, pane } = found;
  return { socket: runtime.server.socketPath, session: pane.window.session.name, window: pane.window.name, window_index: pane.window.index, pane: pane.name, title: pane.title };
}

/** An approval request as the wire carries it, under its id (the toolCallId of its entry in the pane's log). */
export function approvalInfo(request: ApprovalPrompt | null, id: string | null = null): ApprovalInfo | null {
  if (!request) return null;
  return { id, tool: request.tool, tool_name: request.toolName, command: request.command, path: request.path, options: request.options.map((o) => ({ label: o.label, meaning: o.meaning })) };
}

/** A `state` notification for one change of an agent pane's state. */
export function stateNotification(subscription: string, paneId: string, change: StateChange, approval: ApprovalInfo | null): Notifications['state'] {
  return { subscription, ...stateChangeInfo(paneId, change, approval) };
}

/** One change of an agent pane's state, as a `state` notification tells it (a node tells its controllers the same). */
export function stateChangeInfo(paneId: string, change: StateChange, approval: ApprovalInfo | null): Omit<Notifications['state'], 'subscription'> {
  return {
    pane_id: paneId,
    state: change.state,
    previous: change.previous,
    at: change.at,
    approval,
    ...(change.question !== undefined ? { question: change.question } : {}),
    ...(change.error !== undefined ? { error: change.error } : {}),
  };
}

/** A pane's input modes as the wire names them. */
export function inputModesInfo(modes: Pane['inputModes']): InputModesInfo {
  return { bracketed_paste: modes.bracketedPaste, application_cursor_keys: modes.applicationCursorKeys, mouse_tracking: modes.mouseTracking, send_focus: modes.sendFocus };
}

/** The screen as get_screen returns it. */
export function screenResult(snap: ScreenSnapshot): Result<'get_screen'> {
  return { text: snap.lines.join('\n'), lines: snap.lines, cols: snap.cols, rows: snap.rows, cursor: snap.cursor, alt_screen: snap.altScreen, window_title: snap.windowTitle };
}

/** What wait_for returns for a wait's outcome. */
export function waitForResult(result: WaitResult): Result<'wait_for'> {
  const out: Result<'wait_for'> = { matched: result.matched, reason: result.reason, elapsed_ms: result.elapsedMs };
  if (result.match !== undefined) out.match = result.match;
  if (result.line !== undefined) out.line = result.line;
  return out;
}

/** What create_pane returns for an agent that reached its idle prompt. */
export function agentStartResult(profile: AgentProfile, started: AgentStart): Result<'create_pane'> {
  const pane = started.pane;
  return {
    pane_id: pane.id,
    title: pane.title,
    pid: pane.pid,
    agent: { name: profile.data.name, version: started.version ?? null, ready_ms: started.readyMs, dialogs: started.dialogs.map((d) => ({ id: d.id, decision: d.decision })) },
  };
}

/** An agent profile as `agents` lists it, with where its program was found. */
export function agentInfo(profile: AgentProfile, binary: string | undefined): Result<'agents'>['agents'][number] {
  return { name: profile.data.name, display_name: profile.data.display_name ?? profile.data.name, builtin: profile.builtin, binary: binary ?? null };
}

/** A session as log_sessions lists it. */
export function sessionInfo(summary: SessionSummary): SessionInfo {
  return { session_id: summary.session_id, kind: summary.kind, title: summary.title, agent: summary.agent, created_at: summary.created_at, finished: summary.finished, stats: summary.stats };
}

/** What agent_session_prompt returns for one turn of a conversation. */
export function turnResult(turn: SessionTurn): Result<'agent_session_prompt'> {
  const replies = turn.entries.filter((e) => e.type === 'assistant_message');
  return {
    run_id: turn.runId,
    status: turn.status,
    stop_reason: turn.stopReason,
    duration_ms: turn.durationMs,
    entries: turn.entries.length,
    permissions: turn.permissions.map((a) => ({ tool_name: a.toolName, decision: a.decision, reason: a.reason, decided_by: a.decidedBy })),
    reply: replies.at(-1)?.content ?? null,
  };
}

/** An ask as every surface reports it. */
export function askInfo(ask: AskRecord): AskInfo {
  return {
    ask_id: ask.id,
    status: ask.status,
    target: { pane_id: ask.target.paneId, agent: ask.target.agent, title: ask.target.title },
    from: ask.from ? { pane_id: ask.from.paneId ?? null, cwd: ask.from.cwd ?? null, name: ask.from.name ?? null } : null,
    question: ask.question,
    reply: ask.reply,
    reply_source: ask.replySource,
    error: ask.error,
    queued_behind: ask.queuedBehind,
    created_at: ask.createdAt,
    started_at: ask.startedAt,
    typed_at: ask.typedAt,
    ended_at: ask.endedAt,
    delivery: ask.delivery,
    delivered_at: ask.deliveredAt,
  };
}

/** An agent pane as an ask target is listed. */
export function askTargetInfo(t: AskTargetRecord): AskTargetInfo {
  return { pane_id: t.paneId, agent: t.agent, state: t.state, folder: t.cwd, title: t.title, alive: t.alive, askable: t.askable };
}
