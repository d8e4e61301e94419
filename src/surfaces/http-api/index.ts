/** The agent bridge's HTTP API (seed 004): /api/v2/agent/*, /api/v2/chat/proxy, /api/v2/openapi.json. */
export { createHttpApi, startHttpApiServer, type HttpApi, type HttpApiOptions, type HttpApiServer } from './server.js';
export { openApiDocument } from './openapi.js';
export type { RunsPort } from '../../api/index.js';
