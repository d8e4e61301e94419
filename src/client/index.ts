/** The TypeScript client: `connect()` to a daemon and call it with typed methods. */
export { connect, SwitchboardClient, ClientSubscription, RpcError, type ConnectOptions } from './client.js';
export { resolveEndpoint, NO_DAEMON_MESSAGE, type Endpoint, type EndpointOptions, type Warn } from './endpoint.js';
