/** The approval methods: answering the approval prompt an agent pane waits on (`answer_approval`). */
import { SwitchboardError } from '../core/errors.js';
import type { Handler } from './handler.js';
import { answerOnNode } from './pane-operations.js';

export const approvalHandlers: { answer_approval: Handler<'answer_approval'> } = {
  async answer_approval(ctx, p) {
    const onNode = answerOnNode(ctx, p);
    if (onNode) return onNode;
    const pane = ctx.panes.get(p.pane_id);
    const log = ctx.logs.paneLog(pane.id);
    if (!log?.tracker) throw new SwitchboardError('NOT_AN_AGENT', `pane ${pane.id} does not run an agent`, { pane_id: pane.id });
    if (!pane.alive) throw new SwitchboardError('PANE_EXITED', `pane ${pane.id} has exited`, { pane_id: pane.id });
    const answered = await log.answerApproval(p.decision, 'a client (answer_approval)', p.approval_id);
    return { success: true, answered };
  },
};
