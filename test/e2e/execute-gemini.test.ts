import { describe, it } from 'vitest';
import { runExecuteFlow } from './execute-flow.js';

describe('CodingAgent.execute() with gemini and the scripted model', () => {
  it('completes a task with approvals, hands back a question, refuses rm -rf ~, and reports a model error', { timeout: 240_000 }, async () => {
    await runExecuteFlow({ agent: 'gemini', errorStatus: 400, errorShown: /scripted failure|400/, git: true });
  });
});
