import { describe, it } from 'vitest';
import { runExecuteFlow } from './execute-flow.js';

describe('CodingAgent.execute() with claude and the scripted model', () => {
  it('completes a task with approvals, hands back a question, refuses rm -rf ~, and reports a model error', { timeout: 240_000 }, async () => {
    await runExecuteFlow({ agent: 'claude', errorStatus: 500, errorShown: /API Error: 500/, git: true, statusFile: true });
  });
});
