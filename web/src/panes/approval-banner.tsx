/**
 * The approval an agent is waiting for, read off its screen by the server, with the two answers
 * a person gives; the server picks the option that means allow or deny and presses its keys.
 */
import { useState } from 'react';
import { errorMessage } from '../rpc/rpc-client.js';
import type { Approval } from '../rpc/wire.js';
import { useDashboard } from '../ui/dashboard-context.js';

export function ApprovalBanner({ paneId, approval }: { paneId: string; approval: Approval | null }) {
  const { rpc, toasts } = useDashboard();
  const [answering, setAnswering] = useState<'allow' | 'deny' | null>(null);

  const answer = async (decision: 'allow' | 'deny'): Promise<void> => {
    setAnswering(decision);
    try {
      const { answered } = await rpc.call('answer_approval', { pane_id: paneId, decision, ...(approval?.id ? { approval_id: approval.id } : {}) });
      // The label is the option chosen on screen; a CLI whose options the profile cannot read has none.
      const label = answered.label;
      toasts.info(label ? `Answered “${label}”` : decision === 'allow' ? 'Approved' : 'Denied');
    } catch (error) {
      toasts.error(`Could not answer the approval: ${errorMessage(error)}`);
    } finally {
      setAnswering(null);
    }
  };

  const tool = approval ? (approval.tool_name ?? approval.tool) : 'tool';
  const detail = approval ? (approval.command ?? approval.path) : null;
  const options = approval?.options.map((o) => o.label).join(' · ');
  return (
    <div className="approval-banner" data-testid="approval-banner" role="alert">
      <span className="approval-label">Approve</span>
      <span className="approval-tool" data-testid="approval-tool">
        {tool}
      </span>
      {detail !== null && (
        <code className="approval-detail" data-testid="approval-detail" title={options}>
          {detail}
        </code>
      )}
      <span className="spacer" />
      <button type="button" className="button button-allow" data-testid="approve" disabled={answering !== null} onClick={() => void answer('allow')}>
        {answering === 'allow' ? 'Approving…' : 'Approve'}
      </button>
      <button type="button" className="button button-deny" data-testid="deny" disabled={answering !== null} onClick={() => void answer('deny')}>
        {answering === 'deny' ? 'Denying…' : 'Deny'}
      </button>
    </div>
  );
}
