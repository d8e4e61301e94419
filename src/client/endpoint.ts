import { SwitchboardError } from '../core/errors.js';
// The platform's modules themselves, not its index: the tmux launcher reads this on every poll.
import { readPrivateFile } from '../platform/files.js';
import { switchboardHome } from '../platform/paths.js';
import { ENDPOINT_VARIABLES, ENSO_ENDPOINT_VARIABLES, parseRuntimeInfo, runtimeFilePath, type RuntimeInfo } from '../protocol/discovery.js';

/** Where and how to reach a daemon. */
export interface Endpoint {
  socketPath?: string;
  host?: string;
  port?: number;
  token: string;
  /** Where this endpoint came from, for error messages (`transport`: a client given a connected transport). */
  source: 'options' | 'environment' | 'runtime file' | 'transport';
}

/** Says something to the person running the program; the default is a Node process warning (stderr). */
export type Warn = (message: string) => void;

export interface EndpointOptions {
  socketPath?: string;
  host?: string;
  port?: number;
  token?: string;
  /**
   * The Switchboard home whose runtime file to read (default $SWITCHBOARD_HOME or ~/.switchboard).
   * Inside a pane the pane's own variables are used whatever the home: its token is its grant.
   */
  home?: string;
  env?: NodeJS.ProcessEnv;
  /** Where the warning about a runtime file others can read goes (default: a Node process warning). */
  warn?: Warn;
}

export const NO_DAEMON_MESSAGE = 'no daemon running: start one with `switchboard up`';

/**
 * The variable every pane's programs get naming their pane (pane/pane.ts's PANE_MARKER_VARIABLE):
 * with it, or any of the endpoint variables, a program knows it runs inside a pane.
 */
const PANE_ID_VARIABLE = 'SWITCHBOARD_PANE_ID';

/** The largest runtime file a reader takes (the daemon writes a few hundred bytes; the C launcher has the same bound). */
const MAX_RUNTIME_FILE_BYTES = 64 * 1024;

/** Runtime files already warned about in this process: the warning is said once. */
const warnedFiles = new Set<string>();

const processWarning: Warn = (message) => process.emitWarning(message, { code: 'SWITCHBOARD_RUNTIME_FILE_EXPOSED' });

/**
 * Reads the runtime file as every reader must (the same rule in the C launcher and the Python
 * client): refused when it is a symbolic link, not a regular file, not this user's, writable by
 * others, or in a folder others can write to, since whoever can write it can point every client at
 * a daemon of their own and collect the token it is given (CONNECTION_FAILED, naming the file and
 * what is wrong); used with one warning per process when others can read it, since the token in
 * it is then theirs too. Undefined when there is no file.
 */
export function readTrustedRuntimeFile(home: string, warn: Warn = processWarning): RuntimeInfo | undefined {
  const file = runtimeFilePath(home);
  const found = readPrivateFile(file, MAX_RUNTIME_FILE_BYTES);
  if (found.kind === 'missing') return undefined;
  if (found.kind === 'refused') {
    throw new SwitchboardError('CONNECTION_FAILED', `refusing to trust the runtime file: ${found.problem}; only the daemon writes it, with mode 0600 in a private folder (remove it and run \`switchboard up\`)`, { file });
  }
  if (found.exposed !== undefined && !warnedFiles.has(file)) {
    warnedFiles.add(file);
    warn(runtimeFileExposedMessage(found.exposed, file));
  }
  return parseRuntimeInfo(found.text);
}

/** The warning about a runtime file others can read, worded the same by every reader. */
function runtimeFileExposedMessage(exposed: string, file: string): string {
  return `the runtime file ${exposed}, so they can take the daemon's owner token from it; make it private: chmod 600 ${file}`;
}

/** A variable's value that is still a reference to a variable (`$NAME`, `${NAME}`, `${NAME:-x}`). */
const UNEXPANDED_REFERENCE = /^\$(?:[A-Za-z_]\w*|\{[A-Za-z_]\w*(?::?-[^}]*)?\})$/;

/**
 * `given` without the variables that say nothing: an empty variable is an unset one (a CLI told to
 * pass a variable it does not have passes it empty: Gemini CLI's `${NAME:-}` in its MCP server's
 * settings), and so is one still reading as a reference it could not expand; neither a token, a
 * port nor a path looks like that.
 */
export function usableEnv(given: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(given).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '' && !UNEXPANDED_REFERENCE.test(e[1])));
}

/** The variables in `env` that say it is a pane's: its id, or where its daemon is. */
function paneMarks(env: Record<string, string>): string[] {
  return [PANE_ID_VARIABLE, ...Object.values(ENDPOINT_VARIABLES)].filter((name) => env[name] !== undefined);
}

function paneRefusal(env: Record<string, string>, missing: string): SwitchboardError {
  const paneId = env[PANE_ID_VARIABLE];
  const where = paneId !== undefined ? `inside pane ${paneId}` : `inside a Switchboard pane (${paneMarks(env).join(', ')} set)`;
  return new SwitchboardError('CONNECTION_FAILED', `${where} but its ${missing} is not in the environment; refusing to use the runtime file, whose token is the owner's (a program in a pane has its pane's grant only)`, paneId !== undefined ? { pane_id: paneId } : undefined);
}

/**
 * Where a program inside a pane calls its daemon: the pane's own variables and token, never the
 * runtime file (its token is the owner's, and a pane's programs have only their pane's grant).
 * Undefined outside every pane; CONNECTION_FAILED inside one whose token or address is missing.
 * `env` as usableEnv gives it; `token` an explicit one that takes the variable's place.
 */
export function paneEndpoint(env: Record<string, string>, token?: string): Endpoint | undefined {
  if (paneMarks(env).length === 0) return undefined;
  const found = token ?? env[ENDPOINT_VARIABLES.token] ?? env[ENSO_ENDPOINT_VARIABLES.token];
  if (found === undefined) throw paneRefusal(env, `token (${ENDPOINT_VARIABLES.token})`);
  const socketPath = env[ENDPOINT_VARIABLES.socket];
  const port = env[ENDPOINT_VARIABLES.port] ?? env[ENSO_ENDPOINT_VARIABLES.port];
  if (socketPath === undefined && port === undefined) throw paneRefusal(env, `daemon's address (${ENDPOINT_VARIABLES.socket} or ${ENDPOINT_VARIABLES.port})`);
  return { socketPath, host: env[ENDPOINT_VARIABLES.host] ?? env[ENSO_ENDPOINT_VARIABLES.host] ?? '127.0.0.1', port: port !== undefined ? Number(port) : undefined, token: found, source: 'environment' };
}

/**
 * Finds the daemon: explicit options (an address, or a home) first; inside a pane, the pane's own
 * variables and token (never the runtime file); else the variables CCB sets (ENSO_RPC_*), then the runtime file of the
 * Switchboard home, once it has been checked (readTrustedRuntimeFile).
 */
export function resolveEndpoint(options: EndpointOptions = {}): Endpoint {
  const env = usableEnv(options.env ?? process.env);
  const inPane = paneMarks(env).length > 0;
  const envToken = env[ENDPOINT_VARIABLES.token] ?? env[ENSO_ENDPOINT_VARIABLES.token];
  const runtimeFile = (): RuntimeInfo | undefined => readTrustedRuntimeFile(options.home ?? switchboardHome(env), options.warn);
  if (options.socketPath !== undefined || options.port !== undefined) {
    let token = options.token ?? envToken;
    if (token === undefined && inPane) throw paneRefusal(env, `token (${ENDPOINT_VARIABLES.token})`);
    token ??= runtimeFile()?.token;
    if (!token) throw new SwitchboardError('CONNECTION_FAILED', 'no token: pass one, or set SWITCHBOARD_RPC_TOKEN');
    return { socketPath: options.socketPath, host: options.host ?? '127.0.0.1', port: options.port, token, source: 'options' };
  }
  // An explicit home names the daemon to call, wherever the caller runs (a test's own daemon, run
  // from inside a pane); the daemon still holds a pane's programs to their pane, whatever token.
  const pane = options.home === undefined ? paneEndpoint(env, options.token) : undefined;
  if (pane) return pane;
  const envPort = env[ENSO_ENDPOINT_VARIABLES.port];
  if (options.home === undefined && envToken && envPort) {
    return { host: env[ENSO_ENDPOINT_VARIABLES.host] ?? '127.0.0.1', port: Number(envPort), token: options.token ?? envToken, source: 'environment' };
  }
  const info = runtimeFile();
  if (!info) throw new SwitchboardError('CONNECTION_FAILED', NO_DAEMON_MESSAGE);
  return { socketPath: info.socket, host: info.host, port: info.port, token: options.token ?? info.token, source: 'runtime file' };
}
