/**
 * Typing to a team's workers: Ctrl+Enter sends to the focused worker, Ctrl+Shift+Enter to every
 * worker. The daemon judges the text as it judges the planner's: a high-risk one comes back held,
 * and is sent only when the person confirms it here.
 */
import { useState, type KeyboardEvent } from 'react';
import { errorMessage } from '../rpc/rpc-client.js';
import type { TeamBoard } from '../rpc/wire.js';
import { useDashboard } from '../ui/dashboard-context.js';
import { Findings } from './held-dialog.js';

type Judgement = TeamBoard['confirmations'][number]['judgement'];
interface Pending {
  text: string;
  workerId: string | null;
  judgement: Judgement;
}

export function TeamComposer({ runId, focused, disabled }: { runId: string; focused: string | null; disabled: boolean }) {
  const { rpc, toasts } = useDashboard();
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const [held, setHeld] = useState<Pending | null>(null);

  const send = async (workerId: string | null, body: string, confirmed: boolean): Promise<void> => {
    setSending(true);
    try {
      const result = await rpc.call('team_run_send', { run_id: runId, text: body, ...(workerId !== null ? { worker_id: workerId } : {}), ...(confirmed ? { confirmed: true } : {}) });
      if (result.held) {
        setHeld({ text: body, workerId, judgement: result.judgement });
        return;
      }
      setHeld(null);
      setText('');
      toasts.info(result.sent.length === 0 ? 'No worker could take it' : `Sent to ${result.sent.join(', ')}`);
    } catch (error) {
      toasts.error(`Could not send: ${errorMessage(error)}`);
    } finally {
      setSending(false);
    }
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>): void => {
    if (event.key !== 'Enter' || !(event.ctrlKey || event.metaKey)) return;
    event.preventDefault();
    if (text.trim() === '' || sending || disabled) return;
    if (event.shiftKey) void send(null, text, false);
    else if (focused !== null) void send(focused, text, false);
    else toasts.error('Focus a worker first (or Ctrl+Shift+Enter to send to every worker)');
  };

  return (
    <div className="team-composer">
      <textarea
        className="team-composer-input"
        data-testid="team-composer"
        rows={2}
        value={text}
        disabled={disabled}
        placeholder={`Ctrl+Enter: to ${focused ?? 'the focused worker'} · Ctrl+Shift+Enter: to every worker`}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
      />
      {held && (
        <div className="team-held-inline" role="alert" data-testid="send-held">
          <span>
            Held ({held.judgement.level} risk) for {held.workerId ?? 'every worker'}:
          </span>
          <Findings judgement={held.judgement} />
          <button type="button" className="button button-deny" data-testid="send-held-cancel" onClick={() => setHeld(null)}>
            Keep it
          </button>
          <button type="button" className="button button-allow" data-testid="send-held-confirm" disabled={sending} onClick={() => void send(held.workerId, held.text, true)}>
            Send anyway
          </button>
        </div>
      )}
    </div>
  );
}
