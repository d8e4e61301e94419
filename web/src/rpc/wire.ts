/**
 * The part of the daemon's contract the dashboard uses: JSON-RPC methods over `/ws` (as in
 * docs/rpc.md, without the token, which the server adds from the session cookie), their results,
 * and the notifications the server pushes. Types only, from src/contract (the shared vocabulary)
 * and src/protocol (the methods): erased from the bundle, so zod and Node-only code never reach
 * the browser.
 */
import type { Notifications as AllNotifications, ParamsInput, Result } from '../../../src/protocol/methods.js';

export type { NormalizedEntry, AgentState, ApprovalInfo as Approval } from '../../../src/contract/index.js';
export type { AgentInfo, LogMessage, PaneInfo, PaneStateInfo as PaneStateEntry, SessionInfo, RunViewInfo as RunView, RunEventInfo as RunEvent, ClusterNodeInfo as ClusterNode, TeamBoardInfo as TeamBoard } from '../../../src/protocol/methods.js';

/** The methods the dashboard calls: their parameters (without the token) and results. */
type DashboardMethod = 'list' | 'agents' | 'pane_states' | 'create_pane' | 'kill' | 'remove' | 'send_text' | 'answer_approval' | 'subscribe' | 'unsubscribe' | 'log_sessions' | 'log_subscribe' | 'log_unsubscribe' | 'run_list' | 'run_events' | 'run_subscribe' | 'run_cancel' | 'run_interrupt' | 'run_nodes' | 'run_submit'
  | 'team_run_list' | 'team_run_get' | 'team_run_send' | 'team_run_answer' | 'team_run_mark' | 'team_run_pause' | 'team_run_resume' | 'team_run_end' | 'team_run_resend' | 'team_run_restart' | 'team_run_report';
export type Methods = { [M in DashboardMethod]: { params: ParamsInput<M>; result: Result<M> } };
export type MethodName = keyof Methods;
export type CreatePaneParams = ParamsInput<'create_pane'>;
export type TeamRunSummary = Result<'team_run_list'>['runs'][number];

/** Every notification the dashboard listens for, by method. */
export type Notifications = Pick<AllNotifications, 'state' | 'exit' | 'pane_created' | 'log_message' | 'log_finished' | 'log_dropped' | 'run_event' | 'run_stream_end'>;
export type NotificationName = keyof Notifications;

/** A control message on a pane's terminal socket (text frames; output comes as binary frames). */
export type PaneControlMessage = { type: 'exit'; exit_code: number | null; signal: string | null } | { type: 'reset' } | { type: 'error'; message: string };
