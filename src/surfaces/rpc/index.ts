/** The JSON-RPC surface: newline-delimited JSON-RPC 2.0 over TCP and a local socket. */
export { RpcServer, isLoopbackHost, type RpcServerOptions } from './server.js';
export { DEFAULT_CONNECTION_LIMITS, RpcPeer, type ConnectionLimits, type ConnectionDeps } from './peer.js';
export { Dispatcher, errorResponse, type AnyHandler } from './dispatch.js';
export { tokenInEveryRequest, provenAtConnect, type RequestAuthentication } from './authenticate.js';
