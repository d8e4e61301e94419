/**
 * The pane methods: create (a program, or an agent CLI brought to its idle prompt), type into,
 * read, wait on, subscribe to, resize, kill and remove panes.
 */
import { homedir } from 'node:os';
import { PLAIN_PROGRAM_INPUT, pressKeys, sendPrompt, startAgent } from '../agents/index.js';
import { SwitchboardError } from '../core/errors.js';
import { compileSafeRegex } from '../core/safe-regex.js';
import { checkPaneSize, encodeKeys, waitForScreen } from '../pane/index.js';
import type { Params, Result } from '../protocol/methods.js';
import type { OperationContext } from './context.js';
import type { Handler } from './handler.js';
import { parseNodePaneId, type NodePaneMethod } from './remote-panes.js';
import { OWNER_GRANT, scopesForNewPane } from './authorize.js';
import { agentStartResult, paneInfo, screenResult, tmuxPlacement, waitForResult } from './to-wire.js';

type PaneMethods = 'create_pane' | 'send_text' | 'send_keys' | 'send_prompt' | 'paste' | 'is_alive' | 'get_text' | 'get_screen' | 'list' | 'kill' | 'remove' | 'resize' | 'wait_for' | 'subscribe' | 'unsubscribe';

const DEFAULT_TEXT_LINES = 100;
const DEFAULT_WAIT_TIMEOUT_MS = 30_000;
/** How an agent pane takes prompts when its profile is not known (a pane started as a plain program). */

/** What a pane method that reads or types into one pane needs: the panes, their agents and the caller's signal, nothing else (a node answers them with its own). */
export type PaneContext = Pick<OperationContext, 'panes' | 'agentPanes' | 'signal'>;

/** The methods a node answers for its own panes, on the panes alone. */
export const localPaneMethods: { [M in NodePaneMethod]: (ctx: PaneContext, p: Params<M>) => Result<M> | Promise<Result<M>> } = {
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
    return screenResult(ctx.panes.get(p.pane_id).snapshot({ ansi: p.ansi ?? false }));
  },

  resize(ctx, p) {
    const pane = ctx.panes.get(p.pane_id);
    checkPaneSize(p.cols, p.rows);
    pane.resize(p.cols, p.rows);
    return { success: true, cols: pane.cols, rows: pane.rows };
  },

  async send_prompt(ctx, p) {
    const pane = ctx.panes.get(p.pane_id);
    if (!pane.alive) throw new SwitchboardError('PANE_EXITED', `pane ${pane.id} has exited`, { pane_id: pane.id });
    // An agent pane is prompted the one way every prompt to an agent goes: logged, a dialog in the
    // way answered by the policy it was started with (never typed into), typed as its CLI takes it.
    const agent = ctx.agentPanes.get(pane.id);
    if (agent) await agent.prompt(p.text, ctx.signal);
    else await sendPrompt(pane, { input: PLAIN_PROGRAM_INPUT }, p.text, ctx.signal);
    return { success: true };
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

  async answer_approval(ctx, p) {
    // A node's: its agent pane answers as a daemon's pane log does (AgentPane.answer, by a person).
    const pane = ctx.panes.get(p.pane_id);
    const agent = ctx.agentPanes.get(pane.id);
    if (!agent) throw new SwitchboardError('NOT_AN_AGENT', `pane ${pane.id} does not run an agent`, { pane_id: pane.id });
    if (!pane.alive) throw new SwitchboardError('PANE_EXITED', `pane ${pane.id} has exited`, { pane_id: pane.id });
    const answered = await agent.answer(p.decision, { decidedBy: 'person', by: 'a client of the controller (answer_approval)', ...(p.approval_id !== undefined ? { approvalId: p.approval_id } : {}) });
    return { success: true, answered: { label: answered.option?.label ?? null, keys: answered.keys } };
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
    return waitForResult(result);
  },
};

/** `method`'s handler: on this daemon's pane, or on a node's (`<node>/<pane>`) through the cluster. */
function routed<M extends NodePaneMethod>(method: M): { [K in M]: Handler<K> } {
  const local = localPaneMethods[method] as (ctx: PaneContext, p: Params<M>) => Result<M> | Promise<Result<M>>;
  const handler: Handler<M> = (ctx, p) => {
    const ref = parseNodePaneId(p.pane_id);
    if (!ref) return local(ctx, p);
    return ctx.nodePanes.require(ref).call(ref, method, { ...p, pane_id: ref.pane }, ctx.signal);
  };
  return { [method]: handler } as { [K in M]: Handler<K> };
}

/** `answer_approval` for a node's pane: its node answers (a pane here is the approval methods' own). */
export function answerOnNode(ctx: OperationContext, p: Params<'answer_approval'>): Promise<Result<'answer_approval'>> | undefined {
  const ref = parseNodePaneId(p.pane_id);
  return ref ? ctx.nodePanes.require(ref).call(ref, 'answer_approval', { ...p, pane_id: ref.pane }, ctx.signal) : undefined;
}

export const paneHandlers: { [M in PaneMethods]: Handler<M> } = {
  async create_pane(ctx, p) {
    // On a node: a program in a pane there, as the node's policy allows (no token: a node has no API).
    if (p.node !== undefined) {
      const { node, ...params } = p;
      return ctx.nodePanes.requireNode(node).create(node, params);
    }
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
        // An isolated HOME gets Switchboard's MCP server in the CLI's configuration: the agent has the tools with no setup.
        sandbox: p.agent_home !== undefined && p.model_url !== undefined ? { home: p.agent_home, modelUrl: p.model_url, ...(ctx.daemon.mcpServer ? { mcp: ctx.daemon.mcpServer } : {}) } : undefined,
        policy: {
          ...(p.first_run?.trust_folder !== undefined ? { trustFolder: p.first_run.trust_folder } : {}),
          ...(p.first_run?.use_env_api_key !== undefined ? { useEnvApiKey: p.first_run.use_env_api_key } : {}),
          ...(p.first_run?.keep_current_model !== undefined ? { keepCurrentModel: p.first_run.keep_current_model } : {}),
        },
        readyTimeoutMs: p.ready_timeout_ms,
        signal: ctx.signal,
        scopes,
        tempRoot: ctx.agents.tempRoot,
      });
      return agentStartResult(profile, started);
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

  ...routed('send_text'),
  ...routed('send_keys'),

  ...routed('send_prompt'),

  ...routed('paste'),
  ...routed('is_alive'),
  ...routed('get_text'),
  ...routed('get_screen'),

  async list(ctx) {
    const own = ctx.panes.list().map((pane) => paneInfo(pane, tmuxPlacement(ctx.tmux, pane.id)));
    const remote = ctx.nodePanes.remote;
    return { panes: remote ? [...own, ...(await remote.list(ctx.signal))] : own };
  },

  ...routed('kill'),
  ...routed('remove'),

  ...routed('resize'),
  ...routed('wait_for'),

  async subscribe(ctx, p) {
    const events = p.events ?? ['output', 'exit'];
    const replay = p.replay ?? false;
    const ref = p.pane_id !== undefined ? parseNodePaneId(p.pane_id) : undefined;
    if (ref) {
      const subscription = await ctx.caller.nodePaneSubscribe(ref, ctx.nodePanes.require(ref), { events, replay });
      return { subscription };
    }
    if (p.pane_id !== undefined) ctx.panes.get(p.pane_id);
    const subscription = ctx.caller.subscribe({ paneId: p.pane_id, events, replay });
    return { subscription };
  },

  unsubscribe(ctx, p) {
    ctx.caller.unsubscribe(p.subscription);
    return { success: true };
  },
};
