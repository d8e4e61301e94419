/**
 * The headless driver with each real CLI's structured mode against the scripted model: a text
 * reply, a shell command with its result and its effect on disk, a model error, and a cancelled
 * run that leaves no process behind. Entries arrive in the run's MsgStore while it goes.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { HeadlessDriver } from '../../src/drivers/headless-driver.js';
import type { NormalizedEntry } from '../../src/output/entry.js';
import { findProcessesByEnv } from '../../src/platform/index.js';
import { AGENT_BIN_DIRS } from './agent-flow.js';
import { RULES, useScriptedModel } from './scripted-model.js';
import { until } from '../support/processes.js';


const scripted = useScriptedModel({
  name: 'headless',
  title: 'Scripted headless runs',
  rules: [
    RULES.sayHello,
    RULES.writeFileByShell,
    RULES.failNow,
    { match: 'make a note', steps: [{ tool: 'write', path: 'note.txt', content: 'noted by the model\n' }, { text: 'Wrote note.txt.' }] },
    RULES.takeYourTime,
  ],
});

/** Each CLI's own flag that lets its shell tool run without a person to ask (headless mode cannot ask). */
const ALLOW_TOOLS: Record<string, string[]> = {
  claude: ['--allowedTools', 'Bash', 'Write'],
  codex: [],
  gemini: ['--yolo'],
  opencode: ['--auto'],
};

function driverFor(tool: string): { driver: HeadlessDriver; work: string } {
  const home = scripted.tempDir(`sb-headless-${tool}-home-`);
  const work = scripted.tempDir(`sb-headless-${tool}-work-`);
  return { driver: new HeadlessDriver({ tool, sandbox: { home: home.dir, modelUrl: scripted.model.url }, binaryDirs: AGENT_BIN_DIRS, args: ALLOW_TOOLS[tool] }), work: work.dir };
}

const kinds = (entries: NormalizedEntry[]): string[] => entries.map((e) => e.type).filter((t) => t !== 'system_message' && t !== 'user_message');

describe.each(['claude', 'codex', 'gemini', 'opencode'])('the headless driver with %s', (tool) => {
  it('knows the CLI and its format', async () => {
    const { driver } = driverFor(tool);
    const health = await driver.health();
    expect(health, health.problem).toMatchObject({ ok: true });
    expect(health.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(driver.capabilities()).toMatchObject({ streaming: true, schemaVersions: ['v1', 'v2'] });
  });

  it('streams a text reply into entries', { timeout: 90_000 }, async () => {
    const { driver, work } = driverFor(tool);
    const handle = driver.stream('say hello please', { cwd: work });
    const live: NormalizedEntry[] = [];
    handle.entries.subscribe((batch) => void live.push(...batch.map((m) => m.msg)));
    const result = await handle.done;
    expect(result.status, result.stderrTail).toBe('completed');
    expect(result.unparsed).toBe(0);
    expect(result.entries.filter((e) => e.type === 'assistant_message').map((e) => e.content.trim())).toContain('Hello from the scripted model.');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(live.map((e) => e.id)).toEqual(result.entries.map((e) => e.id));
  });

  it('runs a shell command: the call, its result paired by id, the file, the final reply', { timeout: 90_000 }, async () => {
    const { driver, work } = driverFor(tool);
    const result = await driver.run('write a file please', { cwd: work });
    expect(result.status, `${result.stderrTail}\n${JSON.stringify(result.entries, null, 1)}`).toBe('completed');
    expect(kinds(result.entries)).toEqual(['command_run', 'tool_result', 'assistant_message']);
    const [call, output] = result.entries.filter((e) => e.type === 'command_run' || e.type === 'tool_result');
    expect(call?.content).toContain('echo hello-from-tool > tool_out.txt');
    expect(output?.metadata).toMatchObject({ status: 'success', toolCallId: call?.metadata?.toolCallId });
    expect(output?.content).toContain('hello-from-tool');
    expect(readFileSync(path.join(work, 'tool_out.txt'), 'utf8')).toBe('hello-from-tool\n');
  });

  it('writes a file: a file_edit entry naming it, its result paired by id, the file on disk', { timeout: 90_000 }, async () => {
    const { driver, work } = driverFor(tool);
    const result = await driver.run('make a note please', { cwd: work });
    const explain = `${result.stderrTail}\n${JSON.stringify(result.entries, null, 1)}`;
    expect(result.status, explain).toBe('completed');
    const edit = result.entries.find((e) => e.type === 'file_edit');
    expect(edit?.metadata?.filePath ?? edit?.content, explain).toContain('note.txt');
    // Its outcome: a result paired by id, or (Codex, which reports a file change only once it is
    // made) the edit entry itself, already a success.
    const paired = result.entries.find((e) => e.type === 'tool_result' && e.metadata?.toolCallId === edit?.metadata?.toolCallId) ?? edit;
    expect(paired?.metadata?.status, explain).toBe('success');
    expect(readFileSync(path.join(work, 'note.txt'), 'utf8')).toBe('noted by the model\n');
    expect(result.entries.filter((e) => e.type === 'assistant_message').map((e) => e.content.trim())).toContain('Wrote note.txt.');
  });

  it('reports a model error as failed, with an error entry', { timeout: 90_000 }, async () => {
    const { driver, work } = driverFor(tool);
    const result = await driver.run('fail now please', { cwd: work });
    expect(result.status).toBe('failed');
    const said = [...result.entries.filter((e) => e.type === 'error').map((e) => e.content), result.stderrTail].join('\n');
    expect(said).toMatch(/scripted failure for the test|400/);
  });

  it('cancels a run and leaves no process behind', { timeout: 90_000 }, async () => {
    const { driver, work } = driverFor(tool);
    const controller = new AbortController();
    const asked = (): number => scripted.model.modelRequests().filter((r) => r.plan?.prompt.includes('take your time')).length;
    const before = asked();
    const handle = driver.stream('take your time please', { cwd: work, signal: controller.signal });
    // Cancel once the model has this run's request: the CLI is up and waiting on it.
    await until(() => asked() !== before, 'the model to be asked');
    expect(asked()).toBeGreaterThan(before);
    controller.abort();
    const result = await handle.done;
    expect(result.status).toBe('cancelled');
    expect(result.durationMs).toBeLessThan(45_000);
    expect(findProcessesByEnv('SWITCHBOARD_RUN_ID', handle.runId)).toEqual([]);
  });
});
