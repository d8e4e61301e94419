import { describe, it } from 'vitest';
import { useTestDaemon } from '../support/daemon.js';
import { runAgentFlow, useAgentBinaries } from './agent-flow.js';

useAgentBinaries();
const t = useTestDaemon();

// Aider cannot be installed here (no Python package index is reachable): this drives the aider
// profile against test/fixtures/aider-standin, which reproduces aider's prompts.
describe('aider (stand-in) in a pane, against the scripted model', () => {
  it('starts to its idle prompt, replies, asks for approval, runs the tool, and shows a model error', async () => {
    await runAgentFlow(t, { agent: 'aider', errorStatus: 500, expectDialogs: [], errorShown: /litellm\.APIError: .*scripted failure for the test/, screensLabel: 'aider-standin' });
  });
});
