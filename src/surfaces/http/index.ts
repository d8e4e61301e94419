export { DashboardServer, type DashboardServerOptions } from './server.js';
export { DashboardAccess, LOGIN_CODE_TTL_MS, SESSION_COOKIE } from './access.js';
