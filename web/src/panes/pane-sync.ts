/**
 * Keeps a PaneStore in step with the daemon over one RpcClient: on every (re)connect it
 * subscribes to every pane's state and exit, then loads the listing and current states; between
 * connects the notifications keep it current.
 */
import { errorMessage, RpcError, type RpcClient } from '../rpc/rpc-client.js';
import type { Unsubscribe } from '../rpc/emitter.js';
import type { PaneStore } from './pane-store.js';

export function syncPanes(rpc: RpcClient, store: PaneStore, report: (message: string) => void): Unsubscribe {
  // Panes whose state was pushed while a load was in flight: the push is newer than the answer.
  let pushedDuringLoad = new Set<string>();
  let refreshTimer: number | undefined;

  const load = async (): Promise<void> => {
    try {
      // Subscribe first, so nothing happens unseen between the listing and the subscription.
      await rpc.call('subscribe', { events: ['state', 'exit'] });
      pushedDuringLoad = new Set();
      const [list, states] = await Promise.all([rpc.call('list', {}), rpc.call('pane_states', {})]);
      store.setPanes(list.panes);
      store.setStates(states.states, pushedDuringLoad);
    } catch (error) {
      // A lost connection is shown by the status indicator and retried by the next open.
      if (error instanceof RpcError && error.dataCode === 'NOT_CONNECTED') return;
      report(`Could not load the panes: ${errorMessage(error)}`);
    }
  };

  // New panes arrive as bare ids; one listing fetches them (a burst of creations shares it).
  const scheduleRefresh = (): void => {
    window.clearTimeout(refreshTimer);
    refreshTimer = window.setTimeout(() => {
      reloadPanes(rpc, store).catch((error: unknown) => {
        report(`Could not list the panes: ${errorMessage(error)}`);
      });
    }, 50);
  };

  const undo = [
    rpc.onOpen(() => void load()),
    rpc.onNotification('state', (change) => {
      pushedDuringLoad.add(change.pane_id);
      store.applyState(change);
    }),
    rpc.onNotification('exit', (exit) => {
      store.applyExit(exit.pane_id, exit.exit_code, exit.signal);
    }),
    rpc.onNotification('pane_created', scheduleRefresh),
  ];
  if (rpc.status.state === 'open') void load();

  return () => {
    window.clearTimeout(refreshTimer);
    for (const u of undo) u();
  };
}

/** Re-reads the listing now (after this tab created or removed a pane). */
export async function reloadPanes(rpc: RpcClient, store: PaneStore): Promise<void> {
  store.setPanes((await rpc.call('list', {})).panes);
}
