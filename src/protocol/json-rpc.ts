/** JSON-RPC 2.0 message shapes, as Switchboard sends and accepts them. */
import type { ErrorCode } from '../core/errors.js';
import { RPC_CODE_BY_ERROR } from './rpc-codes.js';

export type JsonRpcId = string | number | null;

interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

interface JsonRpcSuccess {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: unknown;
}

export interface JsonRpcFailure {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;

/** True for a JSON value that is a valid request id. */
export function isValidId(id: unknown): id is JsonRpcId {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

/** The error response for `code`: the JSON-RPC number, and in `data.code` the stable string code every surface shares. */
export function errorResponse(id: JsonRpcId, code: ErrorCode, message: string, details?: Readonly<Record<string, unknown>>): JsonRpcFailure {
  return { jsonrpc: '2.0', id, error: { code: RPC_CODE_BY_ERROR[code], message, data: { code, ...details } } };
}
