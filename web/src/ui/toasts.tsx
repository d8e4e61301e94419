import { useSyncExternalStore } from 'react';
import type { ToastStore } from './toast-store.js';

/** The toast area: bottom right, above everything, never in the way of a click elsewhere. */
export function Toasts({ store }: { store: ToastStore }) {
  const toasts = useSyncExternalStore(store.subscribe, store.getSnapshot);
  return (
    <div className="toasts" data-testid="toasts" aria-live="polite">
      {toasts.map((toast) => (
        <button
          key={toast.id}
          type="button"
          className={`toast toast-${toast.kind}`}
          data-testid="toast"
          data-kind={toast.kind}
          title="Dismiss"
          onClick={() => {
            store.dismiss(toast.id);
          }}
        >
          {toast.text}
        </button>
      ))}
    </div>
  );
}
