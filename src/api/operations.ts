import { homedir } from 'node:os';
import { defaultBinaryDirs, findAgentBinary, firstRunPolicyOf, pressKeys, sendPrompt, startAgent } from '../agents/index.js';
import { SwitchboardError } from '../core/errors.js';
import { compileSafeRegex } from '../core/safe-regex.js';
import { checkPaneSize, encodeKeys, waitForScreen } from '../pane/index.js';
import type { MethodName, Params, Result } from '../protocol/methods.js';
import type { OperationContext } from './context.js';
import { paneInfo } from './pane-info.js';
import { agentSessionHandlers, logHandlers } from './log-operations.js';
import { agentStateHandlers } from './agent-state-operations.js';
import { OWNER_GRANT, scopesForNewPane } from './authorize.js';
import { tmuxHandlers, tmuxPlacement } from './tmux-operations.js';
import { runHandlers } from './run-operations.js';

/** Implements one method; may throw SwitchboardError. */
export type Handler<M extends MethodName> = (ctx: OperationContext, params: Params<M>) => Result<M> | Promise<Result<M>>;

export type HandlerTable = { [M in MethodName]: Handler<M> };

const DEFAULT_TEXT_LINES = 100;
const DEFAULT_WAIT_TIMEOUT_MS = 30_000;

/** Every method, against the pane layer. Surfaces call these and never reach around them. */
export const handlers: HandlerTable = {
  ...logHandlers,
  ...agentSessionHandlers,
  ...agentStateHandlers,
  ...tmuxHandlers,
  ...runHandlers,
  async create_pane(ctx, p) {
    // Which token the pane's programs get: never more than the caller has.
    const scopes = scopesForNewPane(ctx.grant ?? OWNER_GRANT, p.agent !== undefined, p.grants);
    if (p.agent !== undefined) {
      const profile = ctx.agents.get(p.agent);
      const started = await startAgent(ctx.panes, profile, {
        cwd: p.cwd ?? homedir(),
        scrollbackRows: p.scrollback,
        title: p.title,
        env: p.env,
        args: p.args,
        cols: p.cols,
        rows: p.rows,
        sandbox: p.agent_home !== undefined && p.model_url !== undefined ? { home: p.agent_home, modelUrl: p.model_url } : undefined,
        policy: {
          ...(p.first_run?.trust_folder !== undefined ? { trustFolder: p.first_run.trust_folder } : {}),
          ...(p.first_run?.use_env_api_key !== undefined ? { useEnvApiKey: p.first_run.use_env_api_key } : {}),
          ...(p.first_run?.keep_current_model !== undefined ? { keepCurrentModel: p.first_run.keep_current_model } : {}),
        },
        readyTimeoutMs: p.ready_timeout_ms,
        signal: ctx.signal,
        scopes,
      });
      const pane = started.pane;
      return {
        pane_id: pane.id,
        title: pane.title,
        pid: pane.pid,
        agent: { name: profile.data.name, version: started.version ?? null, ready_ms: started.readyMs, dialogs: started.dialogs.map((d) => ({ id: d.id, decision: d.decision })) },
      };
    }
    const pane = ctx.panes.create({
      command: p.command,
      argv: p.argv,
      cwd: p.cwd ?? homedir(),
      title: p.title,
      env: p.env,
      cols: p.cols,
      rows: p.rows,
      scrollbackRows: p.scrollback,
      scopes,
    });
    return { pane_id: pane.id, title: pane.title, pid: pane.pid };
  },

  send_text(ctx, p) {
    ctx.panes.get(p.pane_id).sendText(p.text, p.add_newline ?? false);
    return { success: true };
  },

  async send_keys(ctx, p) {
    const pane = ctx.panes.get(p.pane_id);
    if (p.interval_ms === undefined || p.keys.length === 1) pane.sendKeys(p.keys);
    else {
      // Check every key's name first, so a bad one fails the call before any key is pressed.
      encodeKeys(p.keys, { applicationCursorKeys: false });
      if (!pane.alive) throw new SwitchboardError('PANE_EXITED', `pane ${pane.id} has exited`, { pane_id: pane.id });
      await pressKeys(pane, p.keys, p.interval_ms);
    }
    return { success: true };
  },

  async send_prompt(ctx, p) {
    const pane = ctx.panes.get(p.pane_id);
    const profile = pane.agent ? ctx.agents.find(pane.agent.name) : undefined;
    const input = profile?.data.input ?? { separate_enter: true, echo_timeout_ms: 500, enter_delay_ms: 50, paste_multiline: true };
    if (!pane.alive) throw new SwitchboardError('PANE_EXITED', `pane ${pane.id} has exited`, { pane_id: pane.id });
    // An agent pane's late first-run dialog is answered by the policy it was started with, never typed into.
    const screens = profile && pane.agent ? profile.screensFor(pane.agent.version) : undefined;
    ctx.sessions.paneSession(pane.id)?.notePrompt(p.text);
    await sendPrompt(pane, { input, screens, policy: firstRunPolicyOf(pane) }, p.text, ctx.signal);
    return { success: true };
  },

  agents(ctx) {
    // Found with the environment a pane gets, as create_pane will find them.
    const env = ctx.panes.environmentFor(undefined);
    return {
      agents: ctx.agents.list().map((profile) => {
        const binary = profile.resolveBinary?.(env) ?? findAgentBinary(profile.data, env, defaultBinaryDirs(env));
        return { name: profile.data.name, display_name: profile.data.display_name ?? profile.data.name, builtin: profile.builtin, binary: binary ?? null };
      }),
      problems: ctx.agents.problems,
    };
  },

  paste(ctx, p) {
    const bracketed = ctx.panes.get(p.pane_id).paste(p.text, p.bracketed ?? 'auto');
    return { success: true, bracketed };
  },

  is_alive(ctx, p) {
    // As in seed 000's sketch (and tmux's backend): an unknown pane is simply not alive.
    const pane = ctx.panes.find(p.pane_id);
    if (!pane) return { alive: false };
    if (pane.alive) return { alive: true, pid: pane.pid };
    return { alive: false, exit_code: pane.exit?.exitCode ?? null, signal: pane.exit?.signal ?? null };
  },

  get_text(ctx, p) {
    const pane = ctx.panes.get(p.pane_id);
    const { lines, totalLines } = pane.readText(p.lines ?? DEFAULT_TEXT_LINES, { joinWrapped: p.join_wrapped ?? false });
    return { text: lines.join('\n'), total_lines: totalLines };
  },

  get_screen(ctx, p) {
    const snap = ctx.panes.get(p.pane_id).snapshot({ ansi: p.ansi ?? false });
    return {
      text: snap.lines.join('\n'),
      lines: snap.lines,
      cols: snap.cols,
      rows: snap.rows,
      cursor: snap.cursor,
      alt_screen: snap.altScreen,
      window_title: snap.windowTitle,
    };
  },

  list(ctx) {
    return { panes: ctx.panes.list().map((pane) => paneInfo(pane, tmuxPlacement(ctx.panes, pane.id))) };
  },

  async kill(ctx, p) {
    const exit = await ctx.panes.kill(p.pane_id, {
      graceMs: p.grace_ms,
      signal: p.signal ? (`SIG${p.signal}` as NodeJS.Signals) : undefined,
    });
    return { success: true, exit_code: exit.exitCode, signal: exit.signal };
  },

  async remove(ctx, p) {
    await ctx.panes.remove(p.pane_id, { graceMs: p.grace_ms });
    return { success: true };
  },

  resize(ctx, p) {
    const pane = ctx.panes.get(p.pane_id);
    checkPaneSize(p.cols, p.rows);
    pane.resize(p.cols, p.rows);
    return { success: true, cols: pane.cols, rows: pane.rows };
  },

  async wait_for(ctx, p) {
    const pane = ctx.panes.get(p.pane_id);
    const pattern = p.pattern !== undefined ? compileSafeRegex(p.pattern, p.flags ?? '') : undefined;
    if (p.flags !== undefined && p.pattern === undefined) throw new SwitchboardError('INVALID_PARAMS', 'flags need a pattern');
    const result = await waitForScreen(pane, {
      pattern,
      idleMs: p.idle_ms,
      timeoutMs: p.timeout_ms ?? DEFAULT_WAIT_TIMEOUT_MS,
      lines: p.lines,
      signal: ctx.signal,
    });
    const out: Result<'wait_for'> = { matched: result.matched, reason: result.reason, elapsed_ms: result.elapsedMs };
    if (result.match !== undefined) out.match = result.match;
    if (result.line !== undefined) out.line = result.line;
    return out;
  },

  subscribe(ctx, p) {
    if (p.pane_id !== undefined) ctx.panes.get(p.pane_id);
    const subscription = ctx.session.subscribe({
      paneId: p.pane_id,
      events: p.events ?? ['output', 'exit'],
      replay: p.replay ?? false,
    });
    return { subscription };
  },

  unsubscribe(ctx, p) {
    ctx.session.unsubscribe(p.subscription);
    return { success: true };
  },

  info(ctx) {
    return ctx.daemon.info();
  },

  ping() {
    return { pong: true, time: new Date().toISOString() };
  },

  shutdown(ctx) {
    ctx.daemon.requestShutdown();
    return { success: true };
  },
};
