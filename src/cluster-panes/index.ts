export { ClusterPanes } from './cluster-panes.js';
export { NodePaneServer } from './node-pane-server.js';
