export { DashboardServer, type DashboardServerOptions } from './server.js';
