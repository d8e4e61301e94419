/**
 * Seed 000's flow end to end: Claude Code in one pane calls Switchboard's MCP `ask` tool (the server
 * is in its isolated HOME's configuration from the start, no setup) to ask Codex in another pane;
 * the question is typed into Codex, Codex's answer comes back into Claude's turn, and Claude's
 * final reply carries it. Both panes show the exchange. Real CLIs, the scripted model, a real daemon.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import { useScriptedModel } from './scripted-model.js';
import { useTestDaemon } from '../support/daemon.js';

const sm = useScriptedModel({
  name: 'mcp-ask',
  title: 'Agents asking agents',
  rules: [
    { match: 'consult codex', steps: [{ tool: 'mcp', server: 'switchboard', name: 'ask', input: { target: 'codex', question: 'What is the capital of France?' } }, { text: 'Codex says: {{tool_result}}' }] },
    { match: 'capital of France', steps: [{ text: 'Paris is the capital of France.', delay_ms: 500 }] },
  ],
});
const ctx = useTestDaemon();

/**
 * Resolves once a `switchboard mcp` process started for `paneId` runs (Linux: /proc). Claude Code
 * connects its MCP servers after its prompt shows; a prompt typed before that would find no tools.
 */
async function mcpServerOf(paneId: string, timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        if (argv.at(-2) !== 'mcp' || !argv.some((a) => a.endsWith(path.join('cli', 'main.js')))) continue;
        if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`SWITCHBOARD_PANE_ID=${paneId}`)) return Number(pid);
      } catch {
        // Gone, or not ours to read.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no switchboard mcp process for pane ${paneId} within ${timeoutMs} ms`);
}

let client: SwitchboardClient;
let work: string;

beforeAll(async () => {
  client = await connect({ home: ctx.home });
  work = path.join(ctx.work, 'project');
  mkdirSync(work, { recursive: true });
});
afterAll(() => client.close());

describe('an agent asks another through MCP', { timeout: 300_000 }, () => {
  it('Claude Code asks Codex with the MCP ask tool, and Codex\'s answer is in Claude\'s final reply', async () => {
    const codexHome = sm.tempDir('sb-mcp-codex-').dir;
    const claudeHome = sm.tempDir('sb-mcp-claude-').dir;
    const codex = await client.createPane({ agent: 'codex', cwd: work, agent_home: codexHome, model_url: sm.model.url, cols: 120, rows: 40, ready_timeout_ms: 120_000 });
    // Claude Code defers MCP tools behind its ToolSearch tool, which a real model calls first and the
    // scripted one does not: with the search off, the tools are offered to the model directly.
    const claude = await client.createPane({ agent: 'claude', cwd: work, agent_home: claudeHome, model_url: sm.model.url, cols: 120, rows: 40, ready_timeout_ms: 120_000, env: { ENABLE_TOOL_SEARCH: 'false' } });
    const config = JSON.parse(readFileSync(path.join(claudeHome, '.claude.json'), 'utf8')) as { mcpServers?: Record<string, { args?: string[] }> };
    expect(config.mcpServers?.switchboard?.args?.at(-1)).toBe('mcp');

    await mcpServerOf(claude.pane_id);
    // The server is up; Claude Code lists its tools right after (its screen settles once it has).
    await client.waitFor(claude.pane_id, { idleMs: 2_000, timeoutMs: 30_000 });
    await client.sendPrompt(claude.pane_id, 'Please consult codex about France.');
    // Claude Code asks before it uses a tool of an MCP server: the owner allows it, as a person would.
    const deadline = Date.now() + 180_000;
    let answered = false;
    while (!answered && Date.now() < deadline) {
      if ((await client.getText(claude.pane_id, { lines: 100 })).text.includes('does not offer')) break;
      const { states } = await client.paneStates();
      const state = states.find((s) => s.pane_id === claude.pane_id);
      if (state?.state === 'waiting_approval') await client.answerApproval(claude.pane_id, 'allow', state.approval?.id ?? undefined).catch(() => undefined);
      answered = (await client.waitFor(claude.pane_id, { pattern: 'Codex says:', timeoutMs: 1_000 })).matched;
    }
    await client.waitFor(claude.pane_id, { idleMs: 1_500, timeoutMs: 30_000 });
    const screen = (await client.getText(claude.pane_id, { lines: 200 })).text;
    expect(answered, screen).toBe(true);
    // Claude's final reply carries Codex's answer (the tool's result, which Claude Code hands the
    // model as the result's JSON; its lines wrapped on screen).
    const reply = screen.slice(screen.lastIndexOf('Codex says:')).replace(/\s+/g, ' ');
    expect(reply).toContain('Paris is the capital of France.');
    // The answer came back in the tool call: it is not typed into Claude's pane a second time.
    expect(screen).not.toContain('[switchboard reply from');

    // The ask is recorded as Claude's pane asking Codex's, answered from Codex's transcript.
    const { asks } = await client.askList();
    const ask = asks.find((a) => a.from?.pane_id === claude.pane_id);
    expect(ask).toMatchObject({ status: 'done', target: { pane_id: codex.pane_id, agent: 'codex' }, question: 'What is the capital of France?', reply: 'Paris is the capital of France.', reply_source: 'transcript' });
    // Codex's pane shows the question and its answer.
    const codexScreen = (await client.getText(codex.pane_id, { lines: 200 })).text;
    expect(codexScreen).toContain('What is the capital of France?');
    expect(codexScreen).toContain('Paris is the capital of France.');
  });
});
