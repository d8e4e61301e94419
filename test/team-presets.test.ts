/**
 * Seed 003's team presets from the command line, through a real daemon: the built-ins listed,
 * a preset of the user's saved from YAML, edited by saving again, exported and imported, removed;
 * every problem named by its field; the file on disk sealed; a wrong key refused with nothing lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCli } from './support/cli.js';
import { tempDir } from './support/shell.js';

// The home inside a folder of the test's, so the key file beside it is the test's to remove too.
const root = tempDir('sb-team-');
const home = path.join(root.dir, 'home');
const keyFile = `${home}.key`;
const sealedFile = path.join(home, 'teams', 'team-presets.v1.enc');
const sb = (...args: string[]) => runCli(home, args);

const PRESET_YAML = `name: payments-pair
description: refactor the payments module behind a feature flag
planner: lead
roles:
  - name: lead
    agent: claude
    brief: plan the payments refactor
  - name: coder
    agent: codex
    worktree: true
    check: npm test
`;

beforeAll(async () => {
  const up = await sb('up', '--port', '0', '--no-dashboard', '--no-bridge');
  expect(up.code, up.stderr).toBe(0);
});

afterAll(async () => {
  await sb('down');
  root.cleanup();
});

describe('team presets from the CLI', () => {
  it('lists the built-in teams before anything is saved, and writes nothing to do so', async () => {
    const listed = await sb('team', 'presets');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^bug-triage\s+built-in\s+\*planner:claude reproducer:codex log-reader:gemini minimizer:opencode fixer:codex/m);
    expect(listed.stdout).toMatch(/^implement-test-document\s+built-in/m);
    expect(readdirSync(root.dir)).toEqual(['home']);
  });

  it('saves a preset from YAML sealed on disk, shows it with its defaults, and edits it by saving again', async () => {
    const file = path.join(root.dir, 'pair.yaml');
    writeFileSync(file, PRESET_YAML);
    expect(await sb('team', 'preset', 'validate', file)).toMatchObject({ code: 0, stdout: 'payments-pair: valid\n' });
    expect(await sb('team', 'preset', 'save', file)).toMatchObject({ code: 0, stdout: 'payments-pair: saved\n' });
    const shown = JSON.parse((await sb('team', 'preset', 'show', 'payments-pair')).stdout) as { roles: { name: string; approvals: string; stuck_after_s: number; check?: string }[] };
    expect(shown.roles[1]).toMatchObject({ name: 'coder', approvals: 'auto', stuck_after_s: 300, check: 'npm test' });
    const sealed = readFileSync(sealedFile, 'utf8');
    for (const clear of ['payments', 'feature flag', 'npm test', 'coder']) expect(sealed).not.toContain(clear);

    writeFileSync(file, PRESET_YAML.replace('refactor the payments module', 'split the payments module'));
    expect(await sb('team', 'preset', 'save', file)).toMatchObject({ code: 0, stdout: 'payments-pair: saved in place of the one before\n' });
    expect((await sb('team', 'presets', '--json')).stdout).toContain('split the payments module');
  });

  it('names the field of every problem, and keeps nothing invalid', async () => {
    const bad = await runCli(home, ['team', 'preset', 'save', '-'], { input: PRESET_YAML.replace('agent: codex', 'agent: cobol').replace('planner: lead', 'planner: boss') });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("planner: no role is named 'boss'");
    const agent = await runCli(home, ['team', 'preset', 'validate', '-'], { input: PRESET_YAML.replace('agent: codex', 'agent: cobol') });
    expect(agent.code).toBe(1);
    expect(agent.stderr).toContain("roles[1].agent: no agent profile is named 'cobol'");
    expect((await sb('team', 'preset', 'validate', path.join(root.dir, 'none.yaml'))).stderr).toContain('cannot read');
    expect((await sb('team', 'preset', 'show', 'nope')).stderr).toContain("no team preset is named 'nope'");
  });

  it('exports plain JSON that imports back, refusing a clash unless told to replace', async () => {
    const exported = await sb('team', 'preset', 'export', 'payments-pair');
    expect(JSON.parse(exported.stdout)).toMatchObject({ name: 'payments-pair', planner: 'lead' });
    const renamed = exported.stdout.replace('"payments-pair"', '"payments-copy"');
    // The imported preset runs a command as a check: the person is shown it.
    expect(await runCli(home, ['team', 'preset', 'import', '-'], { input: renamed })).toMatchObject({
      code: 0,
      stdout: 'imported: payments-copy\nlook at these before a run uses them:\n  payments-copy/coder: runs this command when a worker says it is done: npm test\n',
    });
    const clash = await runCli(home, ['team', 'preset', 'import', '-'], { input: renamed });
    expect(clash).toMatchObject({ code: 1, stderr: expect.stringContaining('import with replace') as unknown });
    expect((await runCli(home, ['team', 'preset', 'import', '-', '--replace'], { input: renamed })).code).toBe(0);
    expect(await sb('team', 'preset', 'rm', 'payments-copy')).toMatchObject({ code: 0, stdout: 'payments-copy: removed\n' });
    expect((await sb('team', 'preset', 'rm', 'bug-triage')).stderr).toContain('built-in');
  });

  it('with the key gone: KEY_MISMATCH, the sealed file as it was, and all back with the key', async () => {
    const before = readFileSync(sealedFile, 'utf8');
    renameSync(keyFile, `${keyFile}.away`);
    try {
      const listed = await sb('team', 'presets');
      expect(listed.code).toBe(1);
      expect(listed.stderr).toMatch(/team-presets.v1.enc is sealed, and its key \(.*home.key\) is missing: bring the key back/);
      const saved = await runCli(home, ['team', 'preset', 'save', '-'], { input: PRESET_YAML.replace('payments-pair', 'another') });
      expect(saved).toMatchObject({ code: 1, stderr: expect.stringContaining('is missing') as unknown });
      expect(readFileSync(sealedFile, 'utf8')).toBe(before);
    } finally {
      renameSync(`${keyFile}.away`, keyFile);
    }
    expect((await sb('team', 'preset', 'show', 'payments-pair')).code).toBe(0);
  });
});
