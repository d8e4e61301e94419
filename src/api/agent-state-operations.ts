/** Agent panes' states and their pending approvals, for the dashboard and any other client; the dashboard's login link. */
import { SwitchboardError } from '../core/errors.js';
import { approvalInfo } from '../logs/index.js';
import type { HandlerTable } from './operations.js';

export const agentStateHandlers: Pick<HandlerTable, 'pane_states' | 'answer_approval' | 'dashboard_login'> = {
  dashboard_login(ctx) {
    return { url: ctx.daemon.dashboardLoginUrl() };
  },

  pane_states(ctx) {
    const states = ctx.panes.list().flatMap((pane) => {
      const session = ctx.sessions.paneSession(pane.id);
      const tracker = session?.tracker;
      if (!session || !tracker) return [];
      return [{ pane_id: pane.id, state: tracker.state.state, approval: approvalInfo(session.approval, session.approvalId) }];
    });
    return { states };
  },

  async answer_approval(ctx, p) {
    const pane = ctx.panes.get(p.pane_id);
    const session = ctx.sessions.paneSession(pane.id);
    if (!session?.tracker) throw new SwitchboardError('INVALID_PARAMS', `pane ${pane.id} does not run an agent`, { pane_id: pane.id });
    if (!pane.alive) throw new SwitchboardError('PANE_EXITED', `pane ${pane.id} has exited`, { pane_id: pane.id });
    const answered = await session.answerApproval(p.decision, 'a client (answer_approval)', p.approval_id);
    return { success: true, answered };
  },
};
