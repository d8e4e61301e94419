/** The scripted model server: real wire formats, scripted answers, for running agent CLIs offline. */
export { ModelServer, type SentReply } from './server.js';
export { loadScenario, HELLO_SCENARIO, type Scenario } from './scenario.js';
export { readConversation } from './conversation.js';
export { plan } from './planner.js';
