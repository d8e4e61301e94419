import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '../../src/index.js';
import { startTestDaemon, useTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { tempDir } from '../support/shell.js';
import { until } from '../support/processes.js';

const here = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'custom-agent');
process.env.SWITCHBOARD_AGENT_PATH = here;
const t = useTestDaemon({ agentsFile: path.join(here, 'agents.yaml') });

describe('a user-defined agent profile', () => {
  it('starts, takes prompts, shows work, and asks for approval as its profile says', async () => {
    const client = await connect({ home: t.home, env: cleanEnv() });
    const agents = await client.agents();
    expect(agents.agents.find((a) => a.name === 'mytool')).toMatchObject({ display_name: 'My Tool', builtin: false, binary: path.join(here, 'mytool') });
    const created = await client.createPane({ agent: 'mytool', cwd: t.work });
    expect(created.agent).toMatchObject({ name: 'mytool', version: '1.2.0', dialogs: [] });
    const id = created.pane_id;
    expect((await client.getText(id, { lines: 5 })).text).toContain('MyTool 1.2.0 — hello from the profile');
    const listed = (await client.list()).panes.find((p) => p.pane_id === id);
    expect(listed?.agent).toEqual({ name: 'mytool', version: '1.2.0' });

    await client.sendPrompt(id, 'hi there');
    expect((await client.waitFor(id, { pattern: '^thinking\\.\\.\\.', flags: 'm' })).matched).toBe(true);
    expect((await client.waitFor(id, { pattern: '^You said: hi there$', flags: 'm' })).matched).toBe(true);

    await client.sendPrompt(id, 'make a file');
    expect((await client.waitFor(id, { pattern: 'Create note\\.txt\\? \\[y/n\\]$', flags: 'm' })).matched).toBe(true);
    await client.sendKeys(id, ['y', 'Enter'], { intervalMs: 50 });
    expect((await client.waitFor(id, { pattern: '^created note\\.txt$', flags: 'm' })).matched).toBe(true);
    await until(() => existsSync(path.join(t.work, 'note.txt')), 'note.txt to be written');
    expect(readFileSync(path.join(t.work, 'note.txt'), 'utf8')).toBe('a note\n');
    await client.remove(id);
    client.close();
  });

  it('does not stop the daemon from starting when the file has mistakes, and reports them', async () => {
    const dir = tempDir('sb-agents-file-');
    const file = path.join(dir.dir, 'agents.yaml');
    const good = readFileSync(path.join(here, 'agents.yaml'), 'utf8');
    writeFileSync(file, `${good}  - name: broken\n    binary: { names: [broken] }\n    screens: [{ versions: "*", idle: ["(unclosed"] }]\n    approval_keys: { allow_once: [y], deny: [Nope] }\n`);
    const { home, stop } = await startTestDaemon({ agentsFile: file });
    try {
      const client = await connect({ home, env: cleanEnv() });
      const { agents, problems } = await client.agents();
      expect(agents.map((a) => a.name)).toContain('mytool');
      expect(agents.map((a) => a.name)).not.toContain('broken');
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/profile 2: invalid agent profile 'broken': screens\.0\.idle\.0: invalid regular expression.*; approval_keys\.deny: .*Nope/);
      client.close();
    } finally {
      await stop();
      dir.cleanup();
    }
  });
});
