/** The daemon's own methods: who it is (`info`), a liveness check (`ping`), `shutdown`, and a dashboard login link. */
import type { Handler } from './handler.js';

type DaemonMethods = 'info' | 'ping' | 'shutdown' | 'dashboard_login';

export const daemonHandlers: { [M in DaemonMethods]: Handler<M> } = {
  info(ctx) {
    return ctx.daemon.info();
  },

  ping() {
    return { pong: true, time: new Date().toISOString() };
  },

  shutdown(ctx) {
    ctx.daemon.requestShutdown();
    return { success: true };
  },

  dashboard_login(ctx) {
    return { url: ctx.daemon.dashboardLoginUrl() };
  },
};
