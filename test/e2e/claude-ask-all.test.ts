/**
 * Claude Code through the bridge asks before every tool call (src/drivers/claude-ask-all.ts), with
 * the pinned CLI against the scripted model: commands it used to run without asking (`echo hi`,
 * `tail file.txt`) are decided by governance before they run, and a deny stops them; reads,
 * searches and the agent's own machinery (ToolSearch, ListAgents) pass under the built-in policy
 * and the run completes; the README's deny example leaves the file in place and the run failed
 * (policy), also when the user's own Claude settings allow every Bash command. A caller's
 * arguments that would turn the questions off are refused.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RunLedger } from '../../src/ledger/run-ledger.js';
import { SqliteLedgerStore } from '../../src/ledger/sqlite-store.js';
import { parseGovernancePolicy, type GovernancePolicyInput } from '../../src/governance/policy-file.js';
import { RunService, type RunView } from '../../src/runs/run-service.js';
import { defaultBackends } from '../../src/runs/backends/default-backends.js';
import type { RunEvent } from '../../src/ledger/run-events.js';
import { ClaudeConversationDriver } from '../../src/drivers/claude-conversation.js';
import { AGENT_BIN_DIRS } from './agent-flow.js';
import { useScriptedModel } from './scripted-model.js';
import { until } from '../support/processes.js';

/** The runs' folder, known before the scenario is written (Claude's Read wants an absolute path). */
const WORK = mkdtempSync(path.join(tmpdir(), 'sb-claude-ask-all-'));
const FILE = path.join(WORK, 'file.txt');

const scripted = useScriptedModel({
  name: 'claude-ask-all',
  title: 'Claude Code asks before every tool call',
  rules: [
    {
      match: 'look around',
      steps: [
        { tool: 'shell', command: 'echo hi', description: 'Say hi' },
        { tool: 'shell', command: 'tail file.txt', description: 'Show the file' },
        // The tools with no step kind of their own are called by their bare names.
        { tool: 'mcp', server: 'none', name: 'ToolSearch', input: { query: 'select:WebFetch' } },
        { tool: 'mcp', server: 'none', name: 'ListAgents', input: {} },
        { tool: 'mcp', server: 'none', name: 'Read', input: { file_path: FILE } },
        { text: 'Looked around.' },
      ],
    },
    {
      match: 'search the files',
      steps: [
        { tool: 'mcp', server: 'none', name: 'Glob', input: { pattern: '*.txt' } },
        { tool: 'mcp', server: 'none', name: 'Grep', input: { pattern: 'line2', output_mode: 'content' } },
        { text: 'Searched: {{tool_result}}' },
      ],
    },
    { match: 'tail the file', steps: [{ tool: 'shell', command: 'tail file.txt', description: 'Show the file' }, { text: 'Tailed.' }] },
    { match: 'echo to a file', steps: [{ tool: 'shell', command: 'echo hi > out.txt', description: 'Write out.txt' }, { text: 'Echoed.' }] },
    { match: 'remove the file', steps: [{ tool: 'shell', command: 'rm victim.txt', description: 'Remove victim.txt' }, { text: 'Removed.' }] },
  ],
});

/** The README's deny example: `approvals: {rules: [{tool: shell, command: "^rm ", decision: deny}]}`. */
const README_DENY_RULE = { tool: 'shell', command: '^rm ', decision: 'deny' } as const;

interface Bridge {
  service: RunService;
  ledger: RunLedger;
  /** Claude's HOME (the sandbox's). */
  home: string;
}

const bridges: Bridge[] = [];
// Before the model stops (this hook runs first): conversations end while their model still answers.
afterAll(async () => {
  for (const b of bridges) {
    await b.service.dispose();
    await b.ledger.close();
  }
  rmSync(WORK, { recursive: true, force: true });
});

async function startBridge(policy: GovernancePolicyInput, args?: string[]): Promise<Bridge> {
  const root = scripted.tempDir('sb-claude-ask-all-root-').dir;
  const home = path.join(root, 'home');
  mkdirSync(home);
  const backends = defaultBackends({ only: ['claude'], stdioOnly: true, binaryDirs: AGENT_BIN_DIRS, sandbox: { home, modelUrl: scripted.model.url }, ...(args ? { args: { claude: args } } : {}) });
  const ledger = new RunLedger({ store: new SqliteLedgerStore(path.join(root, 'ledger.db')) });
  const { service } = await RunService.start({ ledger, policy: parseGovernancePolicy({ sandbox: { roots: [WORK] }, ...policy }), backends, defaultCwd: WORK, scope: root });
  const bridge = { service, ledger, home };
  bridges.push(bridge);
  return bridge;
}

/** The folder as each run finds it: file.txt and victim.txt, nothing else. */
function resetWork(): void {
  for (const name of ['out.txt', 'victim.txt', 'file.txt']) rmSync(path.join(WORK, name), { force: true });
  writeFileSync(FILE, 'line1\nline2\n');
  writeFileSync(path.join(WORK, 'victim.txt'), 'keep me\n');
}

const ENDED = new Set(['completed', 'failed', 'cancelled']);

/** Runs `prompt` to its end; the run and its events. */
async function run(b: Bridge, prompt: string): Promise<{ run: RunView; events: RunEvent[] }> {
  resetWork();
  const submitted = await b.service.submit({ backend: 'claude', prompt, cwd: WORK });
  await until(async () => ENDED.has((await b.service.get(submitted.id)).status), `run ${submitted.id} to end`, 180_000);
  const events = (await b.service.events(submitted.id)).events;
  return { run: await b.service.get(submitted.id), events };
}

/** The decisions about tool calls (not the run's admission). */
const toolDecisions = (events: RunEvent[]): RunEvent[] => events.filter((e) => e.type === 'decision' && (e.data.subject as { tool_call_id?: string }).tool_call_id !== undefined);

const explain = (events: RunEvent[]): string => JSON.stringify(events.map((e) => [e.seq, e.type, e.type === 'decision' ? e.data : e.compat.text]), null, 1);

interface Call {
  id: string;
  name: string;
  call: RunEvent;
  decision: RunEvent | undefined;
  result: RunEvent | undefined;
}

/** Each tool call of the run with its decision and its result. */
function calls(events: RunEvent[]): Call[] {
  return events
    .filter((e) => e.type === 'tool_call')
    .map((call) => {
      const id = String(call.data.id);
      return {
        id,
        name: String(call.data.name),
        call,
        decision: events.find((e) => e.type === 'decision' && (e.data.subject as { tool_call_id?: string }).tool_call_id === id),
        result: events.find((e) => e.type === 'tool_result' && e.data.id === id),
      };
    });
}

describe('Claude Code through the bridge asks before every tool call', () => {
  it('echo, tail, ToolSearch, ListAgents and Read are each decided by governance before they run, and allowed by the built-in policy', { timeout: 240_000 }, async () => {
    const b = await startBridge({});
    const { run: r, events } = await run(b, 'look around please');
    expect(r, explain(events)).toMatchObject({ status: 'completed' });
    const made = calls(events);
    expect(made.map((c) => c.name), explain(events)).toEqual(['Bash', 'Bash', 'ToolSearch', 'ListAgents', 'Read']);
    for (const c of made) {
      // Asked: governance's decision, before the result came back.
      expect(c.decision?.data, `${c.name}\n${explain(events)}`).toMatchObject({ by: 'policy', decision: 'allow' });
      expect(c.result, c.name).toBeDefined();
      expect(c.decision?.seq ?? Infinity).toBeLessThan(c.result?.seq ?? -Infinity);
    }
    expect(made.map((c) => (c.decision?.data.subject as { tool?: string }).tool)).toEqual(['shell', 'shell', 'internal', 'internal', 'file_read']);
    expect(made[0]?.result?.compat.text).toContain('hi');
    expect(made[1]?.result?.compat.text).toContain('line2');
  });

  it('Glob and Grep are reads of the workdir, allowed by the built-in policy; the run completes', { timeout: 240_000 }, async () => {
    // 2.1.332's default tool set has neither: they are named.
    const b = await startBridge({}, ['--tools', 'Bash,Read,Glob,Grep']);
    const { run: r, events } = await run(b, 'search the files please');
    expect(r, explain(events)).toMatchObject({ status: 'completed' });
    const made = calls(events);
    expect(made.map((c) => c.name), explain(events)).toEqual(['Glob', 'Grep']);
    for (const c of made) {
      expect(c.decision?.data, explain(events)).toMatchObject({ by: 'policy', decision: 'allow', subject: { tool: 'file_read', path: expect.any(String) as string } });
      expect(c.decision?.seq ?? Infinity).toBeLessThan(c.result?.seq ?? -Infinity);
    }
    expect(made[1]?.result?.compat.text).toContain('line2');
  });

  describe('a deny rule stops the command before it runs, also when the user\u2019s own Claude settings allow every Bash command', () => {
    let bridge: Bridge | undefined;
    const get = async (): Promise<Bridge> => {
      if (bridge) return bridge;
      const b = await startBridge({
        approvals: {
          rules: [
            README_DENY_RULE,
            { tool: 'shell', command: '^tail ', decision: 'deny' },
            { tool: 'shell', command: '^echo ', decision: 'deny' },
          ],
        },
      });
      // Without the ask rule, Claude Code runs whatever these allow without asking.
      mkdirSync(path.join(b.home, '.claude'), { recursive: true });
      writeFileSync(path.join(b.home, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash', 'Read'] } }));
      bridge = b;
      return b;
    };

    it('the README example: rm is denied, victim.txt stays, the run ends failed (policy)', { timeout: 240_000 }, async () => {
      const { run: r, events } = await run(await get(), 'remove the file please');
      expect(existsSync(path.join(WORK, 'victim.txt')), explain(events)).toBe(true);
      expect(r).toMatchObject({ status: 'failed', reason: 'policy' });
      const denied = toolDecisions(events)[0];
      expect(denied?.data, explain(events)).toMatchObject({ by: 'policy', decision: 'deny', rule: 'approvals.rules[0]', subject: { tool: 'shell', command: 'rm victim.txt' } });
    });

    it('tail is denied before it runs: the file\u2019s lines never come back', { timeout: 240_000 }, async () => {
      const { run: r, events } = await run(await get(), 'tail the file please');
      expect(r, explain(events)).toMatchObject({ status: 'failed', reason: 'policy' });
      expect(toolDecisions(events)[0]?.data, explain(events)).toMatchObject({ by: 'policy', decision: 'deny', rule: 'approvals.rules[1]' });
      expect(JSON.stringify(events)).not.toContain('line2');
    });

    it('echo into a file is denied before it runs: no out.txt', { timeout: 240_000 }, async () => {
      const { run: r, events } = await run(await get(), 'echo to a file please');
      expect(r, explain(events)).toMatchObject({ status: 'failed', reason: 'policy' });
      expect(toolDecisions(events)[0]?.data, explain(events)).toMatchObject({ by: 'policy', decision: 'deny' });
      expect(existsSync(path.join(WORK, 'out.txt'))).toBe(false);
      expect(readFileSync(FILE, 'utf8')).toBe('line1\nline2\n');
    });
  });

  it('a session whose arguments would turn the questions off is refused before Claude starts', async () => {
    const driver = new ClaudeConversationDriver({ binaryDirs: AGENT_BIN_DIRS });
    const home = scripted.tempDir('sb-claude-ask-all-refused-').dir;
    for (const args of [['--settings', '{"permissions":{"allow":["Bash"]}}'], ['--dangerously-skip-permissions'], ['--permission-mode', 'bypassPermissions'], ['--permission-prompt-tool', 'mcp__x__y']]) {
      const opened = await driver.open({ cwd: WORK, args, sandbox: { home, modelUrl: scripted.model.url } }).then(
        async (session) => {
          await session.close();
          return session;
        },
        (err: unknown) => err,
      );
      expect(opened, args.join(' ')).toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringContaining(args[0] ?? '') as string });
    }
  });
});
