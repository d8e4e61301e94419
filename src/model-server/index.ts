/** The scripted model server: real wire formats, scripted answers, for running agent CLIs offline. */
export { ModelServer, type LoggedRequest, type ModelServerOptions, type SentReply } from './server.js';
export { loadScenario, parseScenario, HELLO_SCENARIO, type Scenario, type Step } from './scenario.js';
export { readConversation, type Api, type ConversationView } from './conversation.js';
export { plan, type Plan, type Reply } from './planner.js';
