/** The JSON-RPC surface: newline-delimited JSON-RPC 2.0 over TCP and a local socket. */
export { RpcServer } from './server.js';
export { type ConnectionLimits } from './peer.js';
export { type AnyHandler } from './dispatch.js';
