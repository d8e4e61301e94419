/**
 * A session's structured log as a list that follows new entries while the reader is at the bottom,
 * stays put while they have scrolled up to read, and follows again once they are back down.
 */
import { useEffect, useLayoutEffect, useRef, useState, useSyncExternalStore } from 'react';
import { useDashboard } from '../ui/dashboard-context.js';
import { LogItemView } from './entry-view.js';
import { SessionFeed, type FeedSnapshot } from './session-feed.js';
import { downloadWithKey } from '../rpc/page-key.js';

/** Within this many pixels of the end counts as at the bottom (fractional scroll positions, borders). */
const BOTTOM_SLACK_PX = 24;

const EMPTY: FeedSnapshot = { items: [], hidden: 0, finished: false };
const subscribeToNothing = (): (() => void) => () => undefined;
const nothing = (): FeedSnapshot => EMPTY;

/** The session's log as it grows; empty until the feed is made (in an effect, so a strict-mode double mount leaves no subscription behind). */
function useSessionLog(sessionId: string): FeedSnapshot {
  const { rpc, toasts } = useDashboard();
  const [feed, setFeed] = useState<SessionFeed | null>(null);
  useEffect(() => {
    const next = new SessionFeed(rpc, sessionId, toasts.error);
    setFeed(next);
    return () => {
      next.dispose();
    };
  }, [rpc, sessionId, toasts]);
  return useSyncExternalStore(feed?.subscribe ?? subscribeToNothing, feed?.getSnapshot ?? nothing);
}

/**
 * `outputFirst`: whether raw output is shown when the view opens. An agent's TUI output is mostly
 * cursor movement, noise beside the entries read from its screen; a shell's output is all it has.
 * `node`: the session is a pane's on that cluster node (its log is read there, and exported from
 * what the node holds of it).
 */
export function LogView({ sessionId, outputFirst, node }: { sessionId: string; outputFirst: boolean; node?: string }) {
  const { items: all, hidden, finished } = useSessionLog(sessionId);
  const { toasts } = useDashboard();
  const exportLog = (): void => {
    downloadWithKey(`/api/sessions/${encodeURIComponent(sessionId)}/export`, `${sessionId.replace(/[^\w.-]/g, '_')}.jsonl`).catch((err: unknown) => toasts.error(`export failed: ${(err as Error).message}`));
  };
  const [showOutput, setShowOutput] = useState(outputFirst);
  const items = showOutput ? all : all.filter((item) => item.kind !== 'output');
  const scroller = useRef<HTMLDivElement>(null);
  const [following, setFollowing] = useState(true);
  // Read in the layout effect without re-running it on every scroll.
  const followingRef = useRef(true);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && followingRef.current) el.scrollTop = el.scrollHeight;
  }, [items]);

  const onScroll = (): void => {
    const el = scroller.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight <= BOTTOM_SLACK_PX;
    followingRef.current = atBottom;
    setFollowing(atBottom);
  };

  const jumpToBottom = (): void => {
    const el = scroller.current;
    if (!el) return;
    followingRef.current = true;
    setFollowing(true);
    el.scrollTop = el.scrollHeight;
  };

  return (
    <div className="log-view" data-testid="log-view" data-following={following}>
      <div className="log-toolbar">
        <span className="log-count" data-testid="log-count">
          {items.length} item{items.length === 1 ? '' : 's'}
          {hidden > 0 && ` (${hidden} older hidden: export for all)`}
          {finished && ' · finished'}
        </span>
        <span className="spacer" />
        <label className="log-filter" title="Show the program's raw output between the entries">
          <input type="checkbox" data-testid="log-show-output" checked={showOutput} onChange={() => setShowOutput((v) => !v)} />
          output
        </label>
        <button
          type="button"
          className="button"
          data-testid="log-export"
          onClick={exportLog}
          title={node !== undefined ? `Download what node ${node} holds of the log as JSONL` : 'Download the whole log as JSONL'}
        >
          Export JSONL
        </button>
      </div>
      <div className="log-scroll" ref={scroller} onScroll={onScroll} data-testid="log-scroll">
        {items.length === 0 && <div className="log-empty">No log messages yet.</div>}
        {items.map((item) => (
          <LogItemView key={item.key} item={item} />
        ))}
      </div>
      {!following && (
        <button type="button" className="log-jump" data-testid="log-jump-bottom" onClick={jumpToBottom}>
          ↓ follow
        </button>
      )}
    </div>
  );
}
