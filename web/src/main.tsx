/** Entry point: one RPC connection, the pane store kept in step with it, and the page. */
import '@xterm/xterm/css/xterm.css';
import './styles.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.js';
import { PaneStore } from './panes/pane-store.js';
import { syncPanes } from './panes/pane-sync.js';
import { RpcClient } from './rpc/rpc-client.js';
import { socketUrl } from './rpc/socket-url.js';
import { adoptKeyFromFragment } from './rpc/page-key.js';
import { DashboardContext, type Dashboard } from './ui/dashboard-context.js';
import { ToastStore } from './ui/toast-store.js';

// Before any socket opens: the login redirect brings the page key in the fragment.
adoptKeyFromFragment();
const toasts = new ToastStore();
const dashboard: Dashboard = { rpc: new RpcClient(socketUrl('/ws')), panes: new PaneStore(), toasts };
// For the page's lifetime: the page is the only owner of the connection.
syncPanes(dashboard.rpc, dashboard.panes, toasts.error);

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <DashboardContext.Provider value={dashboard}>
      <App />
    </DashboardContext.Provider>
  </StrictMode>,
);
