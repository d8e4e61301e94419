/**
 * MCP's Streamable HTTP transport on the daemon's HTTP port (`/mcp`), stateless: each POST is one
 * exchange with a server made for it, whose tools call the dispatcher with the grant of the token
 * the request presented (a Bearer header: the owner's, or an agent pane's own, so an agent asks as
 * its pane). The HTTP server has checked Host and Origin before this is reached.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SwitchboardError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { Caller, type Grant, type Services } from '../../api/index.js';
import { errorCodeFromRpc } from '../../protocol/rpc-codes.js';
import { provenAtConnect } from '../rpc/authenticate.js';
import type { Dispatcher } from '../rpc/dispatch.js';
import { RpcMcpBackend, type RpcCall } from './rpc-backend.js';
import { createMcpServer } from './server.js';

/** The largest MCP request body taken (a question is at most 100 000 characters). */
export const MCP_MAX_BODY_BYTES = 1024 * 1024;

/** Reads a request's body, at most `limit` bytes; undefined when it is larger. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function jsonError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32600, message }, id: null }));
}

/** One method call through the dispatcher, as `grant`: what the RPC surface would answer, or its error thrown. */
function dispatcherCall(dispatcher: Dispatcher, services: Services, grant: Grant, signal: AbortSignal): RpcCall {
  const caller = new Caller(services, { notify: () => undefined, backlogBytes: 0, onDrain: () => ({ dispose: () => undefined }) });
  const connection = { context: { ...services, caller, signal }, authentication: provenAtConnect(grant) };
  let next = 0;
  return async (method, params) => {
    const { reply } = await dispatcher.handle({ jsonrpc: '2.0', id: next++, method, params }, connection);
    if (reply === undefined || Array.isArray(reply)) throw new SwitchboardError('INTERNAL_ERROR', `${method}: no reply`);
    if ('error' in reply) throw new SwitchboardError(errorCodeFromRpc(reply.error.code), reply.error.message);
    return reply.result as never;
  };
}

/** Answers one request to `/mcp` (the caller has authenticated it to `grant`). */
export async function handleMcpHttp(req: IncomingMessage, res: ServerResponse, deps: { dispatcher: Dispatcher; services: Services; grant: Grant; logger: Logger }): Promise<void> {
  if (req.method !== 'POST') {
    // Stateless: no session to stream to or end.
    res.writeHead(405, { allow: 'POST', 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'method not allowed: POST MCP messages to /mcp' }, id: null }));
    return;
  }
  const body = await readBody(req, MCP_MAX_BODY_BYTES);
  if (body === undefined) return jsonError(res, 413, `request over ${MCP_MAX_BODY_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return jsonError(res, 400, 'parse error: the body is not JSON');
  }
  const abort = new AbortController();
  const call = dispatcherCall(deps.dispatcher, deps.services, deps.grant, abort.signal);
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
    jsonError(res, 500, 'internal error');
  }
}
