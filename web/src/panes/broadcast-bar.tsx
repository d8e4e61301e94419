/** One line of text to every selected pane (each gets it followed by Enter), e.g. the same prompt to several agents. */
import { useState, type SubmitEvent } from 'react';
import { errorMessage } from '../rpc/rpc-client.js';
import { useDashboard } from '../ui/dashboard-context.js';

export function BroadcastBar({ targets }: { targets: readonly { paneId: string; title: string }[] }) {
  const { rpc, toasts } = useDashboard();
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);

  const send = async (event: SubmitEvent): Promise<void> => {
    event.preventDefault();
    if (text === '' || targets.length === 0) return;
    setSending(true);
    const results = await Promise.allSettled(targets.map((t) => rpc.call('send_text', { pane_id: t.paneId, text, add_newline: true })));
    setSending(false);
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`${targets[i]?.title ?? '?'}: ${errorMessage(r.reason)}`] : []));
    if (failed.length > 0) toasts.error(`Broadcast failed for ${failed.join('; ')}`);
    // Kept on failure, so it can be sent again.
    if (failed.length < targets.length) setText('');
  };

  return (
    <form className="broadcast" onSubmit={(e) => void send(e)}>
      <input
        className="broadcast-input"
        data-testid="broadcast-input"
        placeholder={targets.length === 0 ? 'select panes (☐ in their headers) to broadcast' : `send to ${targets.length} pane${targets.length === 1 ? '' : 's'}`}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <button type="submit" className="button" data-testid="broadcast-send" disabled={sending || text === '' || targets.length === 0}>
        {sending ? 'Sending…' : `Broadcast${targets.length > 0 ? ` (${targets.length})` : ''}`}
      </button>
    </form>
  );
}
