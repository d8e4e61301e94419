/**
 * `switchboard doctor`, the built CLI, against the real pinned CLIs and against a made-up CLI whose
 * approval prompt its profile cannot read. The runs are slow (real CLIs, a 20 KB prompt), so the
 * two checks run side by side.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentReport, DoctorReport } from '../../src/doctor/index.js';
import { cleanEnv, runCli } from '../support/cli.js';
import { tempDir } from '../support/shell.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PINNED_BIN = path.join(root, 'test', 'agent-clis', 'node_modules', '.bin');
const OPENCODE_PLUGIN_DIR = path.join(root, 'test', 'agent-clis', 'opencode-plugin');
const FAKE_DIR = path.join(root, 'test', 'fixtures', 'doctor-fake');
const PINNED = ['claude', 'codex', 'gemini', 'opencode'];

/** The pinned versions, as test/agent-clis/package.json pins them. */
function pinnedVersions(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(path.join(root, 'test', 'agent-clis', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const deps = pkg.dependencies;
  return { claude: deps['@anthropic-ai/claude-code'] ?? '', codex: deps['@openai/codex'] ?? '', gemini: deps['@google/gemini-cli'] ?? '', opencode: deps['opencode-ai'] ?? '' };
}

function agentOf(report: DoctorReport, name: string): AgentReport {
  const agent = report.agents.find((a) => a.name === name);
  if (!agent) throw new Error(`no report for ${name}: ${JSON.stringify(report.agents.map((a) => a.name))}`);
  return agent;
}

describe.concurrent('switchboard doctor', () => {
  it('passes for the four pinned CLIs: found, version known, every step read right, screens saved', async () => {
    const home = tempDir('sb-doctor-home-');
    const save = tempDir('sb-doctor-save-');
    try {
      const env = { ...cleanEnv(), SWITCHBOARD_AGENT_PATH: PINNED_BIN, SWITCHBOARD_OPENCODE_PLUGIN_DIR: OPENCODE_PLUGIN_DIR };
      const run = await runCli(home.dir, ['doctor', ...PINNED, '--json', '--save', save.dir, '--timeout', '120'], { env, timeoutMs: 900_000 });
      const report = JSON.parse(run.stdout) as DoctorReport;
      const versions = pinnedVersions();
      for (const name of PINNED) {
        const agent = agentOf(report, name);
        // A failed step says what it saw: its states and the last rows of the screen.
        const failed = agent.steps.filter((s) => s.status === 'fail').map((s) => `${s.step}: ${s.detail}\nstates: ${s.states.join(' > ')}\n${(s.screen ?? []).join('\n')}`);
        const context = [`${name}: ${agent.summary}`, ...failed, run.stderr].join('\n');
        expect(agent.binary, context).toBe(path.join(PINNED_BIN, name));
        expect(agent.version, context).toBe(versions[name]);
        expect(['exact', 'nearest'], context).toContain(agent.support?.level);
        expect(agent.steps.map((s) => [s.step, s.status]), context).toEqual([
          ['start', 'pass'],
          ['prompt', 'pass'],
          ['long_prompt', 'pass'],
          ['approval', 'pass'],
          ['idle', 'pass'],
        ]);
        expect(agent.verdict, context).toBe('pass');
        expect(agent.summary).toMatch(new RegExp(`^${name} ${versions[name]} is read right \\((exact|nearest)\\): start \\d+\\.\\d s, prompt \\d+\\.\\d s, long prompt \\d+\\.\\d s, approval \\d+\\.\\d s, back to idle \\d+\\.\\d s$`));
        expect(agent.steps.find((s) => s.step === 'long_prompt')?.detail).toMatch(/^\d+ characters received whole; /);
        expect(agent.approvals[0]).toMatchObject({ tool: 'shell', decision: 'allow' });
        expect(agent.approvals[0]?.command).toContain('doctor_check.txt');
        const seen = new Set(agent.states.map((s) => s.state));
        for (const state of ['idle', 'waiting_approval']) expect([...seen], context).toContain(state);
        expect(agent.states.every((s) => s.state === 'exited' || s.evidence !== null)).toBe(true);
        expect(agent.unread).toEqual([]);
        // Every distinct screen, plain and with colours, under <name>-<version>/, paths normalized.
        const folder = path.join(save.dir, `${name}-${versions[name]}`);
        const files = readdirSync(folder);
        expect(files.filter((f) => f.endsWith('.ansi.txt')).length).toBeGreaterThan(3);
        expect(files.filter((f) => !f.endsWith('.ansi.txt')).length).toBe(files.filter((f) => f.endsWith('.ansi.txt')).length);
        expect(files.some((f) => /^\d{3}-approval-waiting_approval\.txt$/.test(f))).toBe(true);
        for (const f of files) expect(readFileSync(path.join(folder, f), 'utf8')).not.toMatch(/sb-doctor-(?!XXXXXX)[A-Za-z0-9]{6}\/|127\.0\.0\.1:\d/);
      }
      expect(report.ok).toBe(true);
      expect(run.code, run.stderr).toBe(0);
      const saved = readFileSync(path.join(save.dir, 'report.json'), 'utf8');
      expect((JSON.parse(saved) as DoctorReport).agents.map((a) => a.name)).toEqual(PINNED);
      expect(saved).not.toMatch(/sb-doctor-(?!XXXXXX)[A-Za-z0-9]{6}\//);
    } finally {
      home.cleanup();
      save.cleanup();
    }
  }, 900_000);

  it('fails with a clear line for a CLI that draws a screen its profile cannot read', async () => {
    const home = tempDir('sb-doctor-fake-');
    const save = tempDir('sb-doctor-fake-save-');
    try {
      const env = { ...cleanEnv(), SWITCHBOARD_AGENT_PATH: FAKE_DIR, SWITCHBOARD_AGENTS: path.join(FAKE_DIR, 'agents.yaml') };
      const [text, json] = await Promise.all([
        runCli(home.dir, ['doctor', 'fakecli', '--timeout', '60'], { env, timeoutMs: 300_000 }),
        runCli(home.dir, ['doctor', 'fakecli', '--json', '--save', save.dir, '--size', '100x30'], { env, timeoutMs: 300_000 }),
      ]);
      expect(text.code, text.stderr).toBe(1);
      const verdict = '✗ fakecli 1.0.0 is NOT read right: approval failed: the screen was not recognized for 10 s (no pattern of the profile matches): "└ go ahead? (yes/no)"';
      expect(text.stdout.split('\n'), text.stdout).toContain(verdict);
      expect(text.stdout).toContain('version: nearest (patterns >=0.9.0 <1): version 1.0.0 is outside every known range');
      expect(text.stdout).toMatch(/\n {4}start +pass +\d+\.\d s {2}ready at its idle prompt \(idle: "fake>"\)/);
      expect(text.stdout).toMatch(/\n {4}long prompt +pass +\d+\.\d s {2}\d+ characters received whole; /);
      expect(text.stdout).toMatch(/\n {4}back to idle +skipped +not run: an earlier step failed/);
      expect(text.stdout.trimEnd().split('\n').at(-1)).toBe('doctor: 0 of 1 agent CLI read right; not read right: fakecli');
      // The failure's evidence: the screen as it was.
      expect(text.stdout).toContain('│ └ go ahead? (yes/no)');

      expect(json.code).toBe(1);
      const report = JSON.parse(json.stdout) as DoctorReport;
      expect(report.ok).toBe(false);
      expect(report.size).toEqual({ cols: 100, rows: 30 });
      const agent = agentOf(report, 'fakecli');
      expect(agent, agent.summary).toMatchObject({ verdict: 'fail', version: '1.0.0', support: { level: 'nearest' }, approvals: [] });
      expect(agent.steps.map((s) => s.status), agent.summary).toEqual(['pass', 'pass', 'pass', 'fail', 'skipped']);
      expect(agent.unread, agent.summary).toHaveLength(1);
      expect(agent.unread[0]).toMatchObject({ step: 'approval' });
      expect(agent.unread[0]?.lines.at(-1)).toBe('└ go ahead? (yes/no)');
      // The unread screen is among the saved ones, named for what it was read as.
      const folder = path.join(save.dir, 'fakecli-1.0.0');
      const unknown = readdirSync(folder).filter((f) => /^\d{3}-approval-unknown\.txt$/.test(f));
      expect(unknown.some((f) => readFileSync(path.join(folder, f), 'utf8').includes('go ahead? (yes/no)'))).toBe(true);
    } finally {
      home.cleanup();
      save.cleanup();
    }
  }, 300_000);
});
