/**
 * Records each agent CLI's own transcript of a short session against the scripted model, for the
 * transcript readers' unit tests (src/asks/transcripts/*.test.ts): a plain prompt (no ask marker),
 * an ask answered in text, and an ask answered after a shell tool the recorder approves. Paths of
 * the temporary HOME and work folder are replaced with /home/dev and /home/dev/work; nothing else
 * is touched.
 *
 *   node --import tsx scripts/record-transcripts.ts [claude|codex|gemini|opencode ...]
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sendPrompt } from '../src/agents/index.js';
import { ModelServer, type Scenario } from '../src/model-server/index.js';
import { PaneRegistry } from '../src/pane/index.js';
import { askMarker } from '../src/asks/transcripts/marker.js';
import { AGENT_BIN_DIRS } from '../test/e2e/agent-flow.js';
import { startSandboxedAgent, untilState, type AgentInPane } from '../test/support/agent-panes.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(root, 'test', 'fixtures', 'transcripts');

/** The ids the recorded asks carry (the tests key on them). */
export const RECORDED_IDS = { text: 'a1b2c3d4e5', tool: 'f6e5d4c3b2' } as const;

const scenario: Scenario = {
  name: 'transcripts',
  title: 'Recorded session',
  rules: [
    { match: 'say hello', steps: [{ text: 'Hello from the scripted model.' }] },
    { match: 'capital of France', steps: [{ text: 'Paris is the capital of France.', delay_ms: 300 }] },
    {
      match: 'list the files',
      steps: [
        { tool: 'shell', command: 'ls', description: 'List the files', escalate: true },
        { text: 'The folder holds notes.txt.' },
      ],
    },
  ],
};

async function turn(agent: AgentInPane, text: string): Promise<void> {
  agent.tracker.beginTurn();
  await sendPrompt(agent.pane, { input: agent.profile.data.input, screens: agent.profile.screensFor(agent.version) }, text);
  // Approve whatever the turn asks (the recorder plays the person at the keyboard).
  for (;;) {
    const state = await untilState(agent, ['idle', 'waiting_approval', 'error', 'exited'], 120_000);
    if (state !== 'waiting_approval') break;
    agent.pane.sendKeys(agent.profile.data.approval_keys.allow_once);
    await untilState(agent, ['thinking', 'executing', 'idle'], 30_000);
  }
}

function normalize(text: string, home: string, cwd: string): string {
  const dashed = (p: string): string => p.replace(/[^A-Za-z0-9]/g, '-');
  return text.replaceAll(cwd, '/home/dev/work').replaceAll(dashed(cwd), '-home-dev-work').replaceAll(home, '/home/dev').replaceAll(dashed(home), '-home-dev');
}

function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .map((f) => path.join(dir, f))
      .filter((f) => statSync(f).isFile());
  } catch {
    return [];
  }
}

async function record(agentName: string, modelUrl: string): Promise<void> {
  const base = mkdtempSync(path.join(tmpdir(), `sb-rec-${agentName}-`));
  const home = path.join(base, 'home');
  const cwd = path.join(base, 'work');
  mkdirSync(cwd, { recursive: true });
  writeFileSync(path.join(cwd, 'notes.txt'), 'notes\n');
  const registry = new PaneRegistry({});
  try {
    const agent = await startSandboxedAgent(registry, agentName, { home, cwd, modelUrl });
    await turn(agent, 'say hello please');
    await turn(agent, `What is the capital of France?\n${askMarker(RECORDED_IDS.text)}`);
    await turn(agent, `Please list the files here.\n${askMarker(RECORDED_IDS.tool)}`);
    const out = path.join(OUT, agentName);
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    const env = { ...process.env, HOME: home, XDG_DATA_HOME: path.join(home, '.local', 'share') };
    if (agentName === 'opencode') {
      const bin = path.join(AGENT_BIN_DIRS[0] ?? '', 'opencode');
      // The session rows as OpenCode's own database tool prints them (read-only queries).
      for (const table of ['session', 'message', 'part']) {
        const rows = execFileSync(bin, ['db', `SELECT * FROM ${table} ORDER BY time_created`, '--format', 'json'], { env, cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
        writeFileSync(path.join(out, `db-${table}.json`), normalize(rows, home, cwd));
      }
      const db = path.join(home, '.local', 'share', 'opencode', 'opencode.db');
      copyFileSync(db, path.join(out, 'opencode.db'));
    } else {
      const dirs = { claude: '.claude/projects', codex: '.codex/sessions', gemini: '.gemini/tmp' } as Record<string, string>;
      for (const file of filesUnder(path.join(home, dirs[agentName] ?? ''))) {
        if (!file.endsWith('.jsonl')) continue;
        const name = normalize(path.relative(path.join(home, dirs[agentName] ?? ''), file), home, cwd).replaceAll(path.sep, '__');
        writeFileSync(path.join(out, name), normalize(readFileSync(file, 'utf8'), home, cwd));
      }
    }
    process.stdout.write(`${agentName}: ${readdirSync(out).join(', ')}\n`);
  } finally {
    await registry.close({ graceMs: 2_000 });
    rmSync(base, { recursive: true, force: true });
  }
}

const model = await ModelServer.start({ scenario });
try {
  const agents = process.argv.slice(2);
  for (const agent of agents.length > 0 ? agents : ['claude', 'codex', 'gemini', 'opencode']) await record(agent, model.url);
} finally {
  await model.close();
}
