/**
 * How a client finds a daemon, the contract the daemon publishes to and the client reads: the
 * runtime file (its name, where it lives, its fields) and the variables every pane's programs get.
 * The daemon writes the file 0600 in its home ($SWITCHBOARD_HOME or ~/.switchboard); a client
 * reads it only once it trusts it (client/endpoint.ts checks owner, mode and symlinks).
 * No zod here: the client and the tmux launcher read this on every start, and stay light.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The runtime file's name, in the Switchboard home. */
export const RUNTIME_FILE_NAME = 'daemon.json';

/** What a running daemon publishes so clients on this machine can find and call it. */
export interface RuntimeInfo {
  version: string;
  pid: number;
  /** TCP on loopback, when it is on. */
  host?: string;
  port?: number;
  /** The local socket (a Unix socket, a named pipe on Windows), when it is on. */
  socket?: string;
  /** The HTTP port on loopback (the HTTP API under /api/v2, /mcp, the dashboard), when it is on. */
  http?: { host: string; port: number };
  /** The owner's token: every scope. */
  token: string;
  started_at: string;
}

/** The runtime file's path inside a Switchboard home. */
export function runtimeFilePath(home: string): string {
  return path.join(home, RUNTIME_FILE_NAME);
}

/** The runtime file's text for `info`. */
export function formatRuntimeInfo(info: RuntimeInfo): string {
  return `${JSON.stringify(info, null, 2)}\n`;
}

const optionalOf = (value: unknown, type: 'string' | 'number'): boolean => value === undefined || typeof value === type;

/** The runtime file's contents, or undefined when it is not one (not JSON, no token or pid, a field of the wrong type). */
export function parseRuntimeInfo(text: string): RuntimeInfo | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof data !== 'object' || data === null) return undefined;
  const d = data as Partial<Record<keyof RuntimeInfo, unknown>>;
  if (typeof d.token !== 'string' || typeof d.pid !== 'number') return undefined;
  if (!optionalOf(d.host, 'string') || !optionalOf(d.port, 'number') || !optionalOf(d.socket, 'string')) return undefined;
  if (d.http !== undefined && (typeof d.http !== 'object' || d.http === null || typeof (d.http as { port?: unknown }).port !== 'number' || typeof (d.http as { host?: unknown }).host !== 'string')) return undefined;
  return data as RuntimeInfo;
}

/** Reads a home's runtime file as it is (no trust checks: the daemon's own view), or undefined when there is none or it is unreadable. */
export function readRuntimeFile(home: string): RuntimeInfo | undefined {
  let text: string;
  try {
    text = readFileSync(runtimeFilePath(home), 'utf8');
  } catch {
    return undefined;
  }
  return parseRuntimeInfo(text);
}

/**
 * The variables a pane's programs get to call their own daemon (and CCB's ENSO_* names for the
 * same). The token is the pane's own: the owner's in a shell the owner opens, a scoped one in an
 * agent pane.
 */
export const ENDPOINT_VARIABLES = {
  host: 'SWITCHBOARD_RPC_HOST',
  port: 'SWITCHBOARD_RPC_PORT',
  socket: 'SWITCHBOARD_RPC_SOCKET',
  token: 'SWITCHBOARD_RPC_TOKEN',
} as const;
export const ENSO_ENDPOINT_VARIABLES = { host: 'ENSO_RPC_HOST', port: 'ENSO_RPC_PORT', token: 'ENSO_RPC_TOKEN' } as const;

/**
 * `env` without the variables that say where a daemon listens, with which token and as which pane:
 * for programs that must not call back a daemon the process holding them was started under (a
 * cluster node's panes).
 */
export function withoutEndpointVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const endpoint = new Set<string>([...Object.values(ENDPOINT_VARIABLES), ...Object.values(ENSO_ENDPOINT_VARIABLES), 'SWITCHBOARD_PANE_ID']);
  return Object.fromEntries(Object.entries(env).filter(([name]) => !endpoint.has(name)));
}

/** The variables that say where the daemon listens (the token is set per pane). */
export function endpointVariables(where: { tcp?: { host: string; port: number }; socket?: string }): Record<string, string> {
  const env: Record<string, string> = {};
  if (where.tcp) {
    env[ENDPOINT_VARIABLES.host] = where.tcp.host;
    env[ENDPOINT_VARIABLES.port] = String(where.tcp.port);
    env[ENSO_ENDPOINT_VARIABLES.host] = where.tcp.host;
    env[ENSO_ENDPOINT_VARIABLES.port] = String(where.tcp.port);
  }
  if (where.socket) env[ENDPOINT_VARIABLES.socket] = where.socket;
  return env;
}

/** The variables that carry a pane's token. */
export function tokenVariables(token: string): Record<string, string> {
  return { [ENDPOINT_VARIABLES.token]: token, [ENSO_ENDPOINT_VARIABLES.token]: token };
}
