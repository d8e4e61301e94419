import { describe, it } from 'vitest';
import { runFaithfulFlow } from './faithful-flow.js';

describe('issue 10 with gemini and the scripted model', () => {
  it('takes 20 KB and 200 KB tasks whole, approves file changes in the workdir, never approves a destructive command', { timeout: 300_000 }, async () => {
    await runFaithfulFlow({ agent: 'gemini', asksForShell: true, asksForFiles: true });
  });
});
