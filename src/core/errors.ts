/**
 * Typed errors with stable string codes. Every surface (JSON-RPC, CLI, client library, and later
 * HTTP) maps these codes the same way, so a caller can branch on `code` whatever it talks to.
 */

export const ERROR_CODES = [
  'PARSE_ERROR',
  'INVALID_REQUEST',
  'METHOD_NOT_FOUND',
  'INVALID_PARAMS',
  'INTERNAL_ERROR',
  'INVALID_TOKEN',
  'PANE_NOT_FOUND',
  'CONNECTION_FAILED',
  'PANE_EXITED',
  'LIMIT_EXCEEDED',
  'SPAWN_FAILED',
  'TIMEOUT',
  'SHUTTING_DOWN',
  'SESSION_NOT_FOUND',
  'FORBIDDEN',
  'NOT_DELIVERED',
  'AGENT_ERROR',
  'RUN_NOT_FOUND',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** JSON-RPC numeric codes: the seed's table (-32700 … -32003), extended past -32003 for new cases. */
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
  /** No run by that id in the run ledger (never recorded, or removed by retention). */
  RUN_NOT_FOUND: -32013,
};

const ERROR_BY_RPC_CODE = new Map<number, ErrorCode>(
  Object.entries(RPC_CODE_BY_ERROR).map(([code, num]) => [num, code as ErrorCode]),
);

/** The stable string code for a JSON-RPC numeric code, or INTERNAL_ERROR for codes we never send. */
export function errorCodeFromRpc(code: number): ErrorCode {
  return ERROR_BY_RPC_CODE.get(code) ?? 'INTERNAL_ERROR';
}

/** An error every surface knows how to report: a stable code, a human message, optional details. */
export class SwitchboardError extends Error {
  override readonly name = 'SwitchboardError';
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.details = details;
  }

  /** The JSON-RPC numeric code for this error. */
  get rpcCode(): number {
    return RPC_CODE_BY_ERROR[this.code];
  }
}

/** True when `err` is a SwitchboardError, optionally with the given code. */
export function isSwitchboardError(err: unknown, code?: ErrorCode): err is SwitchboardError {
  return err instanceof SwitchboardError && (code === undefined || err.code === code);
}

/** A readable message from anything thrown. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
