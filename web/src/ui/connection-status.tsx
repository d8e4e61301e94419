import { useEffect, useState } from 'react';
import type { ConnectionStatus } from '../rpc/reconnecting-socket.js';

const LABELS: Record<ConnectionStatus['state'], string> = {
  connecting: 'connecting…',
  open: 'connected',
  waiting: 'disconnected',
  stopped: 'closed',
};

/** Seconds until the next attempt, ticking while one is scheduled. */
function useSecondsUntil(at: number | undefined): number | undefined {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (at === undefined) return;
    const timer = window.setInterval(() => {
      setNow(Date.now());
    }, 500);
    return () => {
      window.clearInterval(timer);
    };
  }, [at]);
  return at === undefined ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * A dot and a word for a connection; while waiting to reconnect, the countdown and a way to try
 * at once. `compact` is the pane header's variant: the dot alone unless something is wrong.
 */
export function ConnectionIndicator({ status, onRetry, testId, compact = false }: { status: ConnectionStatus; onRetry: () => void; testId: string; compact?: boolean }) {
  const seconds = useSecondsUntil(status.state === 'waiting' ? status.retryAt : undefined);
  const label = LABELS[status.state];
  return (
    <span className={`conn conn-${status.state}`} data-testid={testId} data-status={status.state} title={label}>
      <span className="conn-dot" />
      {/* In a pane's header only trouble is worth words; a stopped socket is an exited pane, which its badge says. */}
      {!(compact && (status.state === 'open' || status.state === 'stopped')) && <span className="conn-label">{label}</span>}
      {status.state === 'waiting' && (
        <button type="button" className="link-button" onClick={onRetry} title="Reconnect now">
          retry{seconds !== undefined && seconds > 0 ? ` in ${seconds}s` : ''}
        </button>
      )}
    </span>
  );
}
