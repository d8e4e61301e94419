/**
 * MCP's Streamable HTTP transport on the daemon's HTTP port (`/mcp`), stateless: each POST is one
 * exchange with a server made for it, whose tools call the operations (api/'s OperationsPort,
 * over the dispatcher's table) with the grant of the token the request presented (a Bearer header:
 * the owner's, or an agent pane's own, so an agent asks as its pane). The HTTP server has checked Host and Origin before this is reached. The body is read
 * as every HTTP body is (surfaces/http/body.ts): a body past the limit is 413 with LIMIT_EXCEEDED,
 * invalid UTF-8 or JSON 400 with PARSE_ERROR, as JSON-RPC errors whose `data.code` is the stable code.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SwitchboardError, type ErrorCode } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { operationsPort, type Grant, type Services } from '../../api/index.js';
import { RPC_CODE_BY_ERROR } from '../../protocol/rpc-codes.js';
import { sendJson } from '../http/answer.js';
import { BodyTooLarge, bodyText, closeAfterAnswer, readBody } from '../http/body.js';
import type { Dispatcher } from '../rpc/dispatch.js';
import { RpcMcpBackend, type RpcCall } from './rpc-backend.js';
import { createMcpServer } from './server.js';

/** The largest MCP request body taken (a question is at most 100 000 characters). */
export const MCP_MAX_BODY_BYTES = 1024 * 1024;

/** A JSON-RPC error answer with the stable code in `data.code`, as Switchboard's JSON-RPC answers. */
async function jsonError(res: ServerResponse, status: number, code: ErrorCode, message: string): Promise<void> {
  if (res.headersSent) {
    if (!res.writableEnded) res.destroy();
    return;
  }
  await sendJson(res, status, { jsonrpc: '2.0', error: { code: RPC_CODE_BY_ERROR[code], message, data: { code } }, id: null });
}

/** The request's message: 413 past the limit (the connection then closed), 400 when not UTF-8 or not JSON; undefined once answered. */
async function readMessage(req: IncomingMessage, res: ServerResponse): Promise<{ message: unknown } | undefined> {
  let text: string;
  try {
    text = bodyText(await readBody(req, MCP_MAX_BODY_BYTES));
  } catch (err) {
    if (err instanceof BodyTooLarge) {
      closeAfterAnswer(res);
      await jsonError(res, 413, 'LIMIT_EXCEEDED', `request over ${MCP_MAX_BODY_BYTES} bytes`);
    } else if (err instanceof SwitchboardError) {
      await jsonError(res, 400, err.code, err.message);
    } else throw err;
    return undefined;
  }
  try {
    return { message: JSON.parse(text) as unknown };
  } catch {
    await jsonError(res, 400, 'PARSE_ERROR', 'parse error: the body is not JSON');
    return undefined;
  }
}

/** Answers one request to `/mcp` (the caller has authenticated it to `grant`). */
export async function handleMcpHttp(req: IncomingMessage, res: ServerResponse, deps: { dispatcher: Dispatcher; services: Services; grant: Grant; logger: Logger }): Promise<void> {
  if (req.method !== 'POST') {
    // Stateless: no session to stream to or end.
    await sendJson(res, 405, { jsonrpc: '2.0', error: { code: -32000, message: 'method not allowed: POST MCP messages to /mcp' }, id: null }, { allow: 'POST' });
    return;
  }
  const read = await readMessage(req, res);
  if (read === undefined) return;
  const parsed = read.message;
  const abort = new AbortController();
  // Each tool calls its methods as the JSON-RPC dispatcher would (the same table, params check and scope), as this grant.
  const operations = operationsPort(deps.services, deps.dispatcher.handlers, deps.logger);
  const call: RpcCall = (method, params) => operations.call(method, params, { grant: deps.grant, signal: abort.signal });
  // An agent pane's token asks as that pane; the owner's asks as nobody's pane.
  const pane = deps.grant.paneId !== undefined ? deps.services.panes.find(deps.grant.paneId) : undefined;
  const server = createMcpServer(new RpcMcpBackend(call, pane ? { paneId: pane.id, cwd: pane.cwd, ...(pane.agent ? { name: pane.agent.name } : {}) } : {}));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    abort.abort();
    void transport.close().catch(() => undefined);
    void server.close().catch(() => undefined);
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, parsed);
  } catch (err) {
    deps.logger.warn('mcp: a request failed', { error: (err as Error).message });
    await jsonError(res, 500, 'INTERNAL_ERROR', 'internal error');
  }
}
