/**
 * The JSON-RPC numbers of the stable error codes (core/errors.ts): the seed's table (-32700 …
 * -32003), extended past -32003 for new cases. The server maps to them and the client back, so
 * they live with the wire, not in core.
 */
import type { ErrorCode } from '../core/errors.js';

export const RPC_CODE_BY_ERROR: Readonly<Record<ErrorCode, number>> = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  INVALID_TOKEN: -32001,
  PANE_NOT_FOUND: -32002,
  CONNECTION_FAILED: -32003,
  PANE_EXITED: -32004,
  LIMIT_EXCEEDED: -32005,
  SPAWN_FAILED: -32006,
  TIMEOUT: -32007,
  SHUTTING_DOWN: -32008,
  SESSION_NOT_FOUND: -32009,
  FORBIDDEN: -32010,
  NOT_DELIVERED: -32011,
  /** The agent CLI showed an error or exited during a task (a run's outcome, not a fault of the call). */
  AGENT_ERROR: -32012,
  /** The request clashes with the state of what it names (a task already running, a stale approval). */
  CONFLICT: -32013,
  /** The request needs an agent, and the pane it names does not run one. */
  NOT_AN_AGENT: -32014,
  /** No run by that id in the run ledger (never recorded, or removed by retention). */
  RUN_NOT_FOUND: -32015,
  /** No ask by that id (never made, or no longer kept: the daemon keeps the last 1000). */
  ASK_NOT_FOUND: -32016,
  /** Data sealed at rest does not open with the key here (another key sealed it, or it was changed since). */
  KEY_MISMATCH: -32017,
  /** A cluster request found nobody listening: the node (or controller) it names is not connected to NATS. */
  NODE_UNREACHABLE: -32018,
};

const ERROR_BY_RPC_CODE = new Map<number, ErrorCode>(Object.entries(RPC_CODE_BY_ERROR).map(([code, num]) => [num, code as ErrorCode]));

/** The stable string code for a JSON-RPC numeric code, or INTERNAL_ERROR for codes we never send. */
export function errorCodeFromRpc(code: number): ErrorCode {
  return ERROR_BY_RPC_CODE.get(code) ?? 'INTERNAL_ERROR';
}

/** The JSON-RPC numeric code of an error's stable code. */
export function rpcCodeOf(error: { readonly code: ErrorCode }): number {
  return RPC_CODE_BY_ERROR[error.code];
}
