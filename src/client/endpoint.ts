import { SwitchboardError } from '../core/errors.js';
import { switchboardHome, untrustedFileProblem } from '../platform/index.js';
import { ENDPOINT_VARIABLES, ENSO_ENDPOINT_VARIABLES, readRuntimeFile, runtimeFilePath, type RuntimeInfo } from '../protocol/discovery.js';

/** Where and how to reach a daemon. */
export interface Endpoint {
  socketPath?: string;
  host?: string;
  port?: number;
  token: string;
  /** Where this endpoint came from, for error messages (`transport`: a client given a connected transport). */
  source: 'options' | 'environment' | 'runtime file' | 'transport';
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
 * Reads the runtime file as a client must: only if it can be trusted (a regular file of this user,
 * writable by no one else, in a folder no one else can write to), since whoever can write it can
 * point every client at a daemon of their own and collect the token it is given. Throws
 * CONNECTION_FAILED saying what is wrong; undefined when there is no file.
 */
export function readTrustedRuntimeFile(home: string): RuntimeInfo | undefined {
  const file = runtimeFilePath(home);
  const problem = untrustedFileProblem(file);
  if (problem !== undefined) {
    throw new SwitchboardError('CONNECTION_FAILED', `refusing to trust the runtime file: ${problem}; only the daemon writes it, with mode 0600 in a private folder (remove it and run \`switchboard up\`)`, { file });
  }
  return readRuntimeFile(home);
}

/** A variable's value that is still a reference to a variable (`$NAME`, `${NAME}`, `${NAME:-x}`). */
const UNEXPANDED_REFERENCE = /^\$(?:[A-Za-z_]\w*|\{[A-Za-z_]\w*(?::?-[^}]*)?\})$/;

/**
 * Finds the daemon: explicit options first, then the variables a pane gets (a program inside a
 * pane calls its own daemon), then the runtime file of the Switchboard home, once it has been
 * checked: owned by this user, writable by no one else, not a symbolic link.
 */
export function resolveEndpoint(options: EndpointOptions = {}): Endpoint {
  const given = options.env ?? process.env;
  // An empty variable is an unset one: a CLI told to pass a variable it does not have passes it
  // empty (Gemini CLI's `${NAME:-}` in its MCP server's settings), or, if it cannot expand the
  // reference, as written; neither a token, a port nor a path looks like that.
  const env = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined && value !== '' && !UNEXPANDED_REFERENCE.test(value))) as Record<string, string>;
  if (options.socketPath !== undefined || options.port !== undefined) {
    const token = options.token ?? env[ENDPOINT_VARIABLES.token] ?? readTrustedRuntimeFile(options.home ?? switchboardHome(env))?.token;
    if (!token) throw new SwitchboardError('CONNECTION_FAILED', 'no token: pass one, or set SWITCHBOARD_RPC_TOKEN');
    return { socketPath: options.socketPath, host: options.host ?? '127.0.0.1', port: options.port, token, source: 'options' };
  }
  const envToken = env[ENDPOINT_VARIABLES.token] ?? env[ENSO_ENDPOINT_VARIABLES.token];
  const envPort = env[ENDPOINT_VARIABLES.port] ?? env[ENSO_ENDPOINT_VARIABLES.port];
  const envSocket = env[ENDPOINT_VARIABLES.socket];
  if (options.home === undefined && envToken && (envSocket || envPort)) {
    return {
      socketPath: envSocket || undefined,
      host: env[ENDPOINT_VARIABLES.host] ?? env[ENSO_ENDPOINT_VARIABLES.host] ?? '127.0.0.1',
      port: envPort ? Number(envPort) : undefined,
      token: options.token ?? envToken,
      source: 'environment',
    };
  }
  const info = readTrustedRuntimeFile(options.home ?? switchboardHome(env));
  if (!info) throw new SwitchboardError('CONNECTION_FAILED', NO_DAEMON_MESSAGE);
  return { socketPath: info.socket, host: info.host, port: info.port, token: options.token ?? info.token, source: 'runtime file' };
}
