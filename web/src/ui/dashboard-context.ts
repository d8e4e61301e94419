/** The long-lived objects every component shares: one RPC connection, the pane store, the toasts. */
import { createContext, useContext } from 'react';
import type { PaneStore } from '../panes/pane-store.js';
import type { RpcClient } from '../rpc/rpc-client.js';
import type { ToastStore } from './toast-store.js';

export interface Dashboard {
  rpc: RpcClient;
  panes: PaneStore;
  toasts: ToastStore;
}

export const DashboardContext = createContext<Dashboard | null>(null);

/** The dashboard's shared objects; only inside <DashboardContext.Provider>. */
export function useDashboard(): Dashboard {
  const dashboard = useContext(DashboardContext);
  if (!dashboard) throw new Error('useDashboard outside the DashboardContext provider');
  return dashboard;
}
