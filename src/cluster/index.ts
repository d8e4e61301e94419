export { parseNatsOptions, isLoopbackHost, type NatsFlags, type NatsOptions, type NatsAuth, type NatsTls } from './nats-options.js';
export { connectCluster, type ClusterConnection, type ClusterConnectOptions } from './connection.js';
