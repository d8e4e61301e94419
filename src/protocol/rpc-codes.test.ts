import { describe, expect, it } from 'vitest';
import { ERROR_CODES, SwitchboardError } from '../core/errors.js';
import { RPC_CODE_BY_ERROR, errorCodeFromRpc, rpcCodeOf } from './rpc-codes.js';
import { errorResponse } from './json-rpc.js';

describe('JSON-RPC error numbers', () => {
  it('gives every stable code its own number, and reads each back', () => {
    const numbers = ERROR_CODES.map((code) => RPC_CODE_BY_ERROR[code]);
    expect(new Set(numbers).size).toBe(ERROR_CODES.length);
    for (const code of ERROR_CODES) expect(errorCodeFromRpc(RPC_CODE_BY_ERROR[code])).toBe(code);
  });

  it("keeps the seed's numbers and puts new codes after AGENT_ERROR", () => {
    expect(rpcCodeOf(new SwitchboardError('PANE_NOT_FOUND', 'x'))).toBe(-32002);
    expect(RPC_CODE_BY_ERROR.INVALID_TOKEN).toBe(-32001);
    expect(RPC_CODE_BY_ERROR.AGENT_ERROR).toBe(-32012);
    expect(RPC_CODE_BY_ERROR.CONFLICT).toBe(-32013);
    expect(RPC_CODE_BY_ERROR.NOT_AN_AGENT).toBe(-32014);
  });

  it('reads a number it never sends as INTERNAL_ERROR', () => {
    expect(errorCodeFromRpc(-1)).toBe('INTERNAL_ERROR');
  });

  it('builds an error response with the number and, in data, the string code and details', () => {
    expect(errorResponse(7, 'CONFLICT', 'busy', { pane_id: 'p1' })).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32013, message: 'busy', data: { code: 'CONFLICT', pane_id: 'p1' } } });
  });
});
