import { SwitchboardError } from '../core/errors.js';
import { switchboardHome } from '../platform/index.js';
import { readTrustedRuntimeFile } from '../daemon/runtime-file.js';

/** Where and how to reach a daemon. */
export interface Endpoint {
  socketPath?: string;
  host?: string;
  port?: number;
  token: string;
  /** Where this endpoint came from, for error messages. */
  source: 'options' | 'environment' | 'runtime file';
}

export interface EndpointOptions {
  socketPath?: string;
  host?: string;
  port?: number;
  token?: string;
  /** The Switchboard home whose runtime file to read (default $SWITCHBOARD_HOME or ~/.switchboard). */
  home?: string;
  env?: NodeJS.ProcessEnv;
}

export const NO_DAEMON_MESSAGE = 'no daemon running: start one with `switchboard up`';

/**
 * Finds the daemon: explicit options first, then the variables a pane gets (a program inside a
 * pane calls its own daemon), then the runtime file of the Switchboard home, once it has been
 * checked: owned by this user, writable by no one else, not a symbolic link.
 */
export function resolveEndpoint(options: EndpointOptions = {}): Endpoint {
  const env = options.env ?? process.env;
  if (options.socketPath !== undefined || options.port !== undefined) {
    const token = options.token ?? env.SWITCHBOARD_RPC_TOKEN ?? readTrustedRuntimeFile(options.home ?? switchboardHome(env))?.token;
    if (!token) throw new SwitchboardError('CONNECTION_FAILED', 'no token: pass one, or set SWITCHBOARD_RPC_TOKEN');
    return { socketPath: options.socketPath, host: options.host ?? '127.0.0.1', port: options.port, token, source: 'options' };
  }
  const envToken = env.SWITCHBOARD_RPC_TOKEN ?? env.ENSO_RPC_TOKEN;
  const envPort = env.SWITCHBOARD_RPC_PORT ?? env.ENSO_RPC_PORT;
  if (options.home === undefined && envToken && (env.SWITCHBOARD_RPC_SOCKET || envPort)) {
    return {
      socketPath: env.SWITCHBOARD_RPC_SOCKET || undefined,
      host: env.SWITCHBOARD_RPC_HOST ?? env.ENSO_RPC_HOST ?? '127.0.0.1',
      port: envPort ? Number(envPort) : undefined,
      token: options.token ?? envToken,
      source: 'environment',
    };
  }
  const info = readTrustedRuntimeFile(options.home ?? switchboardHome(env));
  if (!info) throw new SwitchboardError('CONNECTION_FAILED', NO_DAEMON_MESSAGE);
  return { socketPath: info.socket, host: info.host, port: info.port, token: options.token ?? info.token, source: 'runtime file' };
}
