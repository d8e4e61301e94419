/**
 * The method contract shared by the server and the client: every method's parameters, result and
 * notifications as zod schemas (that validate and give precise errors), and their types. The
 * table is split by method group (methods/*.ts); names and shapes follow seed 000 for its six
 * methods, and the rest extend them in the same style (snake_case).
 */
import type { z } from 'zod';
import { agentParams, agentResults, agentInfoSchema, paneStateInfoSchema } from './methods/agents.js';
import { approvalParams, approvalResults } from './methods/approvals.js';
import { askInfoSchema, askParams, askResults, askTargetSchema } from './methods/asks.js';
import { daemonParams, daemonResults, infoResultSchema } from './methods/daemon.js';
import { logMessageSchema, logNotifications, logParams, logResults, sessionInfoSchema } from './methods/logs.js';
import { inputModesSchema, paneInfoSchema, paneNotifications, paneParams, paneResults, screenResultSchema, waitForResultSchema } from './methods/panes.js';
import { runParams, runResults } from './methods/runs.js';
import { bridgeNotifications, bridgeParams, bridgeResults, backendInfoSchema, clusterNodeSchema, runEventSchema, runViewSchema } from './methods/bridge.js';
import { executeApprovalInfoSchema, executeParams, executeResultInfoSchema, executeResults } from './methods/execute.js';
import { checkTmuxCommandParams, tmuxParams, tmuxResults } from './methods/tmux.js';
import { presetInfoSchema, teamBoardSchema, teamParams, teamResults } from './methods/teams.js';

export { describeIssues } from './methods/common.js';
/** True for a run status that is final (completed, failed, cancelled): what a client waits for. */
export { isEnded as isRunEnded } from '../contract/index.js';

/** The methods by group: each group's parameters and results live in methods/<group>.ts. */
export const METHOD_GROUPS = {
  panes: Object.keys(paneParams) as (keyof typeof paneParams)[],
  agents: Object.keys(agentParams) as (keyof typeof agentParams)[],
  approvals: Object.keys(approvalParams) as (keyof typeof approvalParams)[],
  logs: Object.keys(logParams) as (keyof typeof logParams)[],
  runs: Object.keys(runParams) as (keyof typeof runParams)[],
  asks: Object.keys(askParams) as (keyof typeof askParams)[],
  bridge: Object.keys(bridgeParams) as (keyof typeof bridgeParams)[],
  execute: Object.keys(executeParams) as (keyof typeof executeParams)[],
  tmux: Object.keys(tmuxParams) as (keyof typeof tmuxParams)[],
  teams: Object.keys(teamParams) as (keyof typeof teamParams)[],
  daemon: Object.keys(daemonParams) as (keyof typeof daemonParams)[],
} as const;

/** Every method's parameters. */
export const paramSchemas = { ...paneParams, ...agentParams, ...approvalParams, ...logParams, ...runParams, ...askParams, ...bridgeParams, ...executeParams, ...tmuxParams, ...teamParams, ...daemonParams } as const;

export type MethodName = keyof typeof paramSchemas;

/**
 * Checks without zod for the methods called once per process start (the `tmux` launchers): each
 * accepts only what its schema accepts, and returns undefined to leave the rest, and every error's
 * wording, to the schema.
 */
export const fastParamChecks: { readonly [M in MethodName]?: (params: unknown) => Params<M> | undefined } = {
  tmux_command: checkTmuxCommandParams,
};
export const METHOD_NAMES = Object.keys(paramSchemas) as MethodName[];

/** Every method's result. */
export const resultSchemas = { ...paneResults, ...agentResults, ...approvalResults, ...logResults, ...runResults, ...askResults, ...bridgeResults, ...executeResults, ...tmuxResults, ...teamResults, ...daemonResults } as const satisfies Record<MethodName, z.ZodType>;

/** Every server-to-client notification, for subscriptions. */
export const notificationSchemas = { ...paneNotifications, ...logNotifications, ...bridgeNotifications } as const;

/** What a caller sends (before defaults and null handling). */
export type ParamsInput<M extends MethodName> = z.input<(typeof paramSchemas)[M]>;
/** What a handler receives after validation. */
export type Params<M extends MethodName> = z.output<(typeof paramSchemas)[M]>;

type Results = { [M in MethodName]: z.output<(typeof resultSchemas)[M]> };
export type Result<M extends MethodName> = Results[M];

export type Notifications = { [N in keyof typeof notificationSchemas]: z.output<(typeof notificationSchemas)[N]> };
export type NotificationName = keyof Notifications;

export type PaneInfo = z.output<typeof paneInfoSchema>;
export type AgentInfo = z.output<typeof agentInfoSchema>;
export type ScreenResult = z.output<typeof screenResultSchema>;
export type WaitForResult = z.output<typeof waitForResultSchema>;
/** An ask as every surface reports it. */
export type AskInfo = z.output<typeof askInfoSchema>;
export type AskTargetInfo = z.output<typeof askTargetSchema>;
export type InfoResult = z.output<typeof infoResultSchema>;
/** A team preset as the daemon answers it. */
export type PresetInfo = z.output<typeof presetInfoSchema>;
/** A team run's board as every surface shows it. */
export type TeamBoardInfo = z.output<typeof teamBoardSchema>;
/** An agent pane's state (see src/contract/agent-state.ts for the states). */
export type PaneStateInfo = z.output<typeof paneStateInfoSchema>;
/** A session as log_sessions lists it. */
export type SessionInfo = z.output<typeof sessionInfoSchema>;
/** One message of a session's log with its place in it (seq counts from 1, never repeats). */
export type LogMessage = z.output<typeof logMessageSchema>;
/** The input modes a pane's program has set, as a screen frame carries them. */
export type InputModesInfo = z.output<typeof inputModesSchema>;
/** A run of the agent bridge as every surface shows it. */
export type RunViewInfo = z.output<typeof runViewSchema>;
/** One of a run's events on the wire (v1 or v2). */
export type RunEventInfo = z.output<typeof runEventSchema>;
/** A backend of the agent bridge with its capabilities and health. */
export type BackendInfoWire = z.output<typeof backendInfoSchema>;
/** A live node of a controller's cluster. */
export type ClusterNodeInfo = z.output<typeof clusterNodeSchema>;
/** One approval of a task run by agent_execute, and how it was answered. */
export type ExecuteApprovalInfo = z.output<typeof executeApprovalInfoSchema>;
/** What agent_execute returns: seed 002's execute() result. */
export type ExecuteResultInfo = z.output<typeof executeResultInfoSchema>;
