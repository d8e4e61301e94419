import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect } from '../../src/index.js';
import { useTestDaemon } from '../support/daemon.js';
import { runAgentFlow, useAgentBinaries } from './agent-flow.js';
import { useScriptedModel } from './scripted-model.js';

useAgentBinaries();
const sm = useScriptedModel({ name: 'gemini-trust', title: 'Gemini trust', rules: [] });
const t = useTestDaemon();

describe('gemini in a pane, against the scripted model', () => {
  // Trusted by the policy before it starts (GEMINI_CLI_TRUST_WORKSPACE): no trust dialog, no restart.
  it('starts to its idle prompt, replies, asks for approval, runs the tool, and shows a model error', async () => {
    await runAgentFlow(t, { agent: 'gemini', errorStatus: 400, expectDialogs: [], errorShown: /\[API Error: .*scripted failure for the test/ });
  });

  it('starts untrusted without asking when the policy does not trust the folder, and remembers nothing', async () => {
    const client = await connect({ home: t.home });
    const home = sm.tempDir('sb-gemini-untrusted-home-').dir;
    const cwd = sm.tempDir('sb-gemini-untrusted-work-').dir;
    try {
      const created = await client.createPane({ agent: 'gemini', cwd, agent_home: home, model_url: sm.model.url, cols: 120, rows: 40, first_run: { trust_folder: false } });
      expect(created.agent?.dialogs).toEqual([]);
      // Gemini says so itself: project settings, hooks, MCP servers and GEMINI.md stay off.
      const screen = (await client.waitFor(created.pane_id, { pattern: 'This folder is untrusted', timeoutMs: 30_000 })).matched;
      expect(screen, (await client.getText(created.pane_id, { lines: 60 })).text).toBe(true);
      await client.remove(created.pane_id);
      // The answer was for this start only: Gemini's own trust file has no word of the folder.
      const trusted = path.join(home, '.gemini', 'trustedFolders.json');
      expect(existsSync(trusted) ? readFileSync(trusted, 'utf8') : '').not.toContain(path.basename(cwd));
    } finally {
      client.close();
    }
  });
});
