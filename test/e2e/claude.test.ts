import { describe, it } from 'vitest';
import { useTestDaemon } from '../support/daemon.js';
import { runAgentFlow, useAgentBinaries } from './agent-flow.js';

useAgentBinaries();
const t = useTestDaemon();

describe('claude in a pane, against the scripted model', () => {
  it('starts to its idle prompt, replies, asks for approval, runs the tool, and shows a model error', async () => {
    await runAgentFlow(t, { agent: 'claude', errorStatus: 500, expectDialogs: ['trust_folder', 'use_api_key'], errorShown: /API Error: 500 scripted failure for the test/ });
  });
});
