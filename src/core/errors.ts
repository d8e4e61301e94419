/**
 * Typed errors with stable string codes. Every surface (JSON-RPC, CLI, client library, and later
 * HTTP) maps these codes the same way, so a caller can branch on `code` whatever it talks to; what
 * a code is on a given wire (JSON-RPC's numbers, src/protocol/rpc-codes.ts) is that surface's.
 *
 * INVALID_PARAMS is a request that is wrong whatever the state (a bad value, a name that does not
 * exist); CONFLICT is a request that is fine but clashes with the state of what it names (an agent
 * already running a task, an approval no longer on screen, one being answered already); a request
 * that needs an agent and names a pane without one is NOT_AN_AGENT. NODE_UNREACHABLE is a request
 * over the cluster that nobody listens for: the node (or the controller) it names is not connected.
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
  'CONFLICT',
  'NOT_AN_AGENT',
  'RUN_NOT_FOUND',
  'ASK_NOT_FOUND',
  'KEY_MISMATCH',
  'NODE_UNREACHABLE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

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
