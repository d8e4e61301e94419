/**
 * Seed 003's risk gate, for a person: a text the planner sent that the gate holds, with the worker
 * it is for, the text itself and each rule it matched. Approve lets it through to the worker, Deny
 * drops it; the planner's call gets the answer either way, and the run records who decided.
 * Several held texts are answered one at a time, oldest first.
 */
import { useState } from 'react';
import { errorMessage } from '../rpc/rpc-client.js';
import type { TeamBoard } from '../rpc/wire.js';
import { useDashboard } from '../ui/dashboard-context.js';

type Held = TeamBoard['confirmations'][number];

export function Findings({ judgement }: { judgement: Held['judgement'] }) {
  return (
    <ul className="team-findings" data-testid="held-findings">
      {judgement.findings.map((f, i) => (
        <li key={i} className={`team-finding team-finding-${f.level}`}>
          <span className="team-finding-level">{f.level}</span> <code>{f.command}</code> <span className="muted">{f.reason}</span>
        </li>
      ))}
    </ul>
  );
}

export function HeldDialog({ runId, held, waiting }: { runId: string; held: Held; waiting: number }) {
  const { rpc, toasts } = useDashboard();
  const [answering, setAnswering] = useState<'allow' | 'deny' | null>(null);
  const answer = async (decision: 'allow' | 'deny'): Promise<void> => {
    setAnswering(decision);
    try {
      await rpc.call('team_run_answer', { run_id: runId, confirmation_id: held.id, decision });
      toasts.info(decision === 'allow' ? `Sent to ${held.worker_id}` : `Denied: ${held.worker_id} never gets it`);
    } catch (error) {
      // Answered meanwhile from another dashboard or the CLI: the board drops it by itself.
      toasts.error(`Could not answer: ${errorMessage(error)}`);
    } finally {
      setAnswering(null);
    }
  };
  return (
    <div className="modal-backdrop">
      <div className="modal team-held" role="dialog" aria-modal="true" aria-labelledby={`held-${held.id}`} data-testid="held-dialog" data-confirmation-id={held.id}>
        <h3 id={`held-${held.id}`}>
          The planner wants to send a {held.judgement.level}-risk text to <span data-testid="held-worker">{held.worker_id}</span>
        </h3>
        <pre className="team-held-text" data-testid="held-text">
          {held.text}
        </pre>
        <Findings judgement={held.judgement} />
        {waiting > 1 && <div className="muted">{waiting - 1} more after this one.</div>}
        <div className="modal-actions">
          <button type="button" className="button button-deny" data-testid="held-deny" disabled={answering !== null} onClick={() => void answer('deny')}>
            {answering === 'deny' ? 'Denying…' : 'Deny'}
          </button>
          <button type="button" className="button button-allow" data-testid="held-approve" disabled={answering !== null} onClick={() => void answer('allow')}>
            {answering === 'allow' ? 'Approving…' : 'Approve'}
          </button>
        </div>
      </div>
    </div>
  );
}
