/**
 * A long reply read off a narrow screen comes back as the model wrote it: the CLI hard-wraps it at
 * the terminal's width (Claude Code under its "⏺", Codex under its "•", both with a two-space
 * continuation indent), and execute()'s final message joins those rows again, keeping the real
 * line breaks (paragraphs, list items). The screens are kept in test-artifacts/screens/wrapped/
 * for final-message.test.ts's fixtures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CodingAgent } from '../../src/index.js';
import { PaneRegistry } from '../../src/pane/index.js';
import { ModelServer, type Scenario } from '../../src/model-server/index.js';
import { tempDir } from '../support/shell.js';
import { AGENT_BIN_DIRS, useAgentBinaries } from './agent-flow.js';

export const LONG_PARAGRAPH =
  'The bridge keeps a conversation open after each run so that a follow-up can continue it without starting the command line interface again, and it closes the least recently used one first once the cap is reached.';
export const SECOND_PARAGRAPH = 'A second paragraph stays apart.';
const SCENARIO: Scenario = { name: 'wrapped', title: 'A long reply', rules: [{ match: 'explain the pool', steps: [{ text: `${LONG_PARAGRAPH}\n\n${SECOND_PARAGRAPH}` }] }] };

useAgentBinaries();

// Claude Code's trust dialog is read by its words, which a 60-column screen wraps past recognition.
describe.each([
  ['claude', 80],
  ['codex', 60],
])('a long reply from %s at %i columns', (agent, COLS) => {
  it('is one paragraph in the final message, the paragraphs kept apart', { timeout: 180_000 }, async () => {
    const model = await ModelServer.start({ scenario: SCENARIO });
    const home = tempDir(`sb-wrapped-${agent}-home-`);
    const work = tempDir(`sb-wrapped-${agent}-work-`);
    const registry = new PaneRegistry({ defaults: { cols: COLS } });
    const coder = new CodingAgent({ tool: agent, sandbox: { home: home.dir, modelUrl: model.url }, binaryDirs: AGENT_BIN_DIRS, registry, timeoutMs: 120_000, idleTimeoutMs: 60_000 });
    try {
      const result = await coder.execute('explain the pool please', { workdir: work.dir });
      const screen = registry.list()[0]?.screenLines();
      if (screen) {
        const dir = path.join('test-artifacts', 'screens', 'wrapped');
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, `${agent}-${COLS}.txt`), `${screen.join('\n')}\n`);
      }
      expect(result.status, JSON.stringify({ error: result.errorMessage, message: result.finalMessage })).toBe('completed');
      expect(result.finalMessage).toBe(`${LONG_PARAGRAPH}\n\n${SECOND_PARAGRAPH}`);
    } finally {
      await coder.dispose();
      await registry.close({ graceMs: 2_000 });
      await model.close();
      home.cleanup();
      work.cleanup();
    }
  });
});
