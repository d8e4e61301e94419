/**
 * One ask to each agent CLI in a pane, against the scripted model: the reply comes from that CLI's
 * own transcript (Claude Code's JSONL, Gemini CLI's chat file, OpenCode's database), bound to the
 * ask by its marker and ended by the CLI's own end of turn. Codex is covered by ask-engine.test.ts.
 * Also: OpenCode's recorded database read through `opencode db` with the reader's own query.
 */
import { cpSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { opencodeDbQuery } from '../../../src/asks/index.js';
import { askRowsSql, readOpenCodeRows, type OpenCodeRow } from '../../../src/asks/transcripts/opencode.js';
import { AGENT_BIN_DIRS } from '../agent-flow.js';
import { useScriptedModel } from '../scripted-model.js';
import { useAskRig } from './ask-support.js';
import { until } from '../../support/processes.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const sm = useScriptedModel({
  name: 'asks-each',
  title: 'Asks',
  rules: [
    { match: 'capital of France', steps: [{ text: 'Paris is the capital of France.', delay_ms: 500 }] },
    {
      match: 'list the files',
      steps: [
        { tool: 'shell', command: 'ls', description: 'List the files', escalate: true },
        { text: 'The folder holds what ls showed.' },
      ],
    },
  ],
});
const rig = useAskRig(sm);

describe.each([
  ['claude', 'system/turn_duration'],
  ['gemini', 'gemini/message'],
  ['opencode', 'message/finish:stop'],
] as const)('asking %s', { timeout: 240_000 }, (agent, endSignal) => {
  it('reads the reply from its transcript, ended by its own end of turn', async () => {
    const started = await rig.start(agent);
    const ask = rig.engine.ask({ target: agent, question: 'What is the capital of France?' });
    const done = await rig.engine.wait(ask.id);
    expect(done, started.pane.screenLines().join('\n')).toMatchObject({ status: 'done', reply: 'Paris is the capital of France.', replySource: 'transcript', endSignal });
    // The CLI may write its transcript before it redraws: the reply shows on screen a moment later.
    await until(() => started.pane.screenLines().join('\n').includes('Paris is the capital of France.'), 'the reply on the screen');
    expect(started.pane.screenLines().join('\n')).toContain('Paris is the capital of France.');
  });
});

describe("OpenCode's recorded database through its own db command", () => {
  it('answers the reader\'s query with the rows of each ask', async () => {
    const home = sm.tempDir('sb-oc-db-').dir;
    const data = path.join(home, '.local', 'share', 'opencode');
    mkdirSync(data, { recursive: true });
    cpSync(path.join(root, 'test', 'fixtures', 'transcripts', 'opencode', 'opencode.db'), path.join(data, 'opencode.db'));
    const query = opencodeDbQuery({ format: 'opencode-sqlite', home, cwd: home, dir: '.local/share/opencode', pattern: 'opencode.db', binary: path.join(AGENT_BIN_DIRS[0] ?? '', 'opencode'), env: { XDG_DATA_HOME: path.join(home, '.local', 'share') } });
    const rows = (await query(askRowsSql('f6e5d4c3b2'))) as OpenCodeRow[];
    expect(readOpenCodeRows(rows, 'f6e5d4c3b2')).toMatchObject({ found: true, done: true, reply: 'The folder holds notes.txt.' });
    expect(await query(askRowsSql('0123456789'))).toEqual([]);
  }, 60_000);
});
