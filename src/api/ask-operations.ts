/**
 * The ask methods: an agent (or a person, or a script) asks the agent in another pane a question
 * and gets its answer (src/asks/). A pane's own token asks as that pane: its async replies are
 * delivered there and nowhere else. The HTTP API (`/api/v2/asks`) and the MCP server call the same
 * handlers by name (an OperationsPort), so every surface has the same operations with the same errors.
 */
import { SwitchboardError } from '../core/errors.js';
import type { Asker } from '../asks/index.js';
import { callerOf } from './bridge-operations.js';
import type { Handler } from './handler.js';
import type { OperationContext } from './context.js';
import { askInfo, askTargetInfo } from './to-wire.js';

type AskMethods = 'ask' | 'ask_wait' | 'ask_get' | 'ask_cancel' | 'ask_list' | 'ask_targets' | 'set_askable';

/** Who asks: the caller's own pane when its token belongs to one (it cannot speak for another). */
function askerOf(ctx: OperationContext, p: { from_pane_id?: string | undefined; cwd?: string | undefined; from_name?: string | undefined }): Asker {
  const own = ctx.grant?.paneId;
  if (own !== undefined && p.from_pane_id !== undefined && p.from_pane_id !== own) {
    throw new SwitchboardError('FORBIDDEN', `forbidden: the token of pane ${own} may ask only as pane ${own}, not as ${p.from_pane_id}`, { pane_id: own });
  }
  const paneId = own ?? p.from_pane_id;
  const pane = paneId !== undefined ? ctx.panes.find(paneId) : undefined;
  if (paneId !== undefined && !pane) throw new SwitchboardError('PANE_NOT_FOUND', `no pane ${paneId} (from_pane_id)`, { pane_id: paneId });
  const cwd = p.cwd ?? pane?.cwd;
  const name = p.from_name ?? pane?.agent?.name;
  return { ...(paneId !== undefined ? { paneId } : {}), ...(cwd !== undefined ? { cwd } : {}), ...(name !== undefined ? { name } : {}) };
}

/** Waits for an ask while the caller is there: a caller gone (its connection closed) stops waiting, the ask goes on. */
async function waitWhileThere(ctx: OperationContext, askId: string, timeoutMs?: number): Promise<ReturnType<typeof askInfo>> {
  const engine = ctx.asks.engine;
  if (ctx.signal.aborted) return askInfo(await engine.get(askId));
  let onAbort: (() => void) | undefined;
  const gone = new Promise<void>((resolve) => {
    onAbort = resolve;
    ctx.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([engine.wait(askId, timeoutMs), gone]);
  } finally {
    if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
  }
  return askInfo(await engine.get(askId));
}

export const askHandlers: { [M in AskMethods]: Handler<M> } = {
  async ask(ctx, p) {
    const from = askerOf(ctx, p);
    const wait = p.wait ?? true;
    const record = ctx.asks.ask({
      createdBy: callerOf(ctx.grant),
      target: p.target,
      question: p.question,
      from,
      ...(p.timeout_ms !== undefined ? { timeoutMs: p.timeout_ms } : {}),
      // Not waiting: the outcome goes into the asker's pane, when it is an agent pane to put it in.
      deliver: (p.deliver ?? !wait) && from.paneId !== undefined && ctx.asks.directory.get(from.paneId) !== undefined,
    });
    if (!wait) return askInfo(record);
    return waitWhileThere(ctx, record.id);
  },

  ask_wait(ctx, p) {
    return waitWhileThere(ctx, p.ask_id, p.timeout_ms);
  },

  async ask_get(ctx, p) {
    return askInfo(await ctx.asks.engine.get(p.ask_id));
  },

  async ask_cancel(ctx, p) {
    // Only the caller that made the ask, or the owner (FORBIDDEN otherwise).
    return askInfo(await ctx.asks.engine.cancel(p.ask_id, callerOf(ctx.grant)));
  },

  async ask_list(ctx, p) {
    const all = await ctx.asks.engine.list();
    return { asks: all.slice(-(p.limit ?? 100)).map(askInfo) };
  },

  ask_targets(ctx) {
    return { targets: ctx.asks.targets().map(askTargetInfo) };
  },

  set_askable(ctx, p) {
    if (!ctx.panes.find(p.pane_id)) throw new SwitchboardError('PANE_NOT_FOUND', `no pane ${p.pane_id}`, { pane_id: p.pane_id });
    ctx.asks.engine.setAskable(p.pane_id, p.askable);
    return { success: true as const };
  },
};
