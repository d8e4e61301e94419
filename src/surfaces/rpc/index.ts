/** The JSON-RPC surface: newline-delimited JSON-RPC 2.0 over TCP and a local socket. */
export { RpcServer, isLoopbackHost, type RpcServerOptions } from './server.js';
export { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './connection.js';
export { TokenRegistry, generateToken, tokenMatches } from './auth.js';
export { Dispatcher, errorResponse } from './dispatch.js';
