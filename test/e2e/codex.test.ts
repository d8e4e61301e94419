import { describe, it } from 'vitest';
import { useTestDaemon } from '../support/daemon.js';
import { runAgentFlow, useAgentBinaries } from './agent-flow.js';

useAgentBinaries();
const t = useTestDaemon();

describe('codex in a pane, against the scripted model', () => {
  it('starts to its idle prompt, replies, asks for approval, runs the tool, and shows a model error', async () => {
    await runAgentFlow(t, { agent: 'codex', errorStatus: 500, expectDialogs: [], lateDialogs: ['model_migration'], keptModel: 'gpt-5.5', errorShown: /■ / });
  });
});
