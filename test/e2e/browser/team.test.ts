/**
 * The dashboard's Team view (issue 24 items 5, 6 and 12) in Debian's Chromium, against a real
 * daemon running a team: a scripted planner speaking marker lines and two shell workers. The
 * planner sends `git reset --hard`: the risk gate's dialog names the worker, the text and the rule,
 * Deny keeps it from the worker; a second risky text is approved from a second dashboard and runs.
 * The second dashboard sends to one focused worker (Ctrl+Enter) and broadcasts (Ctrl+Shift+Enter);
 * a person types into a worker's own terminal; the first marks a worker done, which ends the
 * planner's wait, and both show the run completed and its report. Every decision is in the record.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../../src/index.js';
import { useTestDaemon } from '../../support/daemon.js';
import { ARTIFACTS, launchChromium } from '../../support/chromium.js';
import { cleanEnv } from '../../support/cli.js';
import { SHELL_AGENT_ENV, tempDir } from '../../support/shell.js';
import { PLANNER_PROFILE_DATA, plannerProgram, type PlannerCall } from '../../support/scripted-planner.js';
import { boardUntil } from '../../support/team-board.js';


const scratch = tempDir('sb-browser-team-');
const work = path.join(scratch.dir, 'work');
const approvedDir = path.join(work, 'approved-dir');
mkdirSync(approvedDir, { recursive: true });
const log = path.join(scratch.dir, 'planner.jsonl');

const CALLS: PlannerCall[] = [
  ['tasks.add', { title: 'tidy the folder' }],
  ['tabs.send', { tabId: 'executor-1', text: 'git reset --hard' }],
  ['tabs.send', { tabId: 'executor-1', text: 'rm -rf approved-dir && echo approved-ran' }],
  // Until a person marks the executor done on the board.
  ['tabs.wait', { tabId: 'executor-1', until: ['completed'], timeoutMs: 600_000 }],
  ['run.report_draft', { text: '# Tidy\nThe executor removed approved-dir.\n' }],
  ['run.complete', { summary: 'the folder is tidy' }],
];
const agentsFile = path.join(scratch.dir, 'agents.json');
writeFileSync(agentsFile, JSON.stringify({ agents: [{ ...PLANNER_PROFILE_DATA, binary: { names: ['scripted-planner'], env: 'SCRIPTED_PLANNER_BIN' }, interactive_args: [plannerProgram(scratch.dir, log, CALLS)] }] }));
const PRESET = { name: 'browser-team', planner: 'lead', roles: [{ name: 'lead', agent: 'scripted-planner' }, { name: 'executor', agent: 'shell' }, { name: 'tester', agent: 'shell' }] };

const t = useTestDaemon({ agentsFile, dashboard: { port: 0 }, env: { ...process.env, SCRIPTED_PLANNER_BIN: process.execPath, ...SHELL_AGENT_ENV(work) } });
let browser: Browser;
let client: SwitchboardClient;

beforeAll(async () => {
  browser = await launchChromium();
  client = await connect({ home: t.home, env: cleanEnv() });
});

afterAll(async () => {
  try {
    await browser.close();
    client.close();
  } finally {
    // Also when beforeAll failed and neither is there.
    scratch.cleanup();
  }
});

async function openBoard(runId: string): Promise<{ page: Page; board: Locator }> {
  const page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
  await page.goto(t.daemon.dashboardLoginUrl());
  const item = page.locator(`[data-testid="team-item"][data-run-id="${runId}"]`);
  await item.click({ timeout: 20_000 });
  const board = page.locator(`[data-testid="team-board"][data-run-id="${runId}"]`);
  await board.getByTestId('team-goal').waitFor();
  return { page, board };
}

/** What a worker's pane shows, from the daemon (not the page). */
async function workerScreen(paneId: string | null): Promise<string> {
  return paneId === null ? '' : (await client.getText(paneId, { lines: 200 })).text;
}

describe("the dashboard's Team view in Chromium", () => {
  it('shows the board on two dashboards, holds risky text for a person, sends, broadcasts and completes', { timeout: 180_000 }, async () => {
    const runId = (await client.teamRunStart({ preset: PRESET, goal: 'tidy the folder', folder: work })).run_id;
    const a = await openBoard(runId);
    const b = await openBoard(runId);
    try {
      // Both boards show the goal and the workers as the daemon has them.
      for (const { board } of [a, b]) {
        expect(await board.getByTestId('team-goal').textContent()).toBe('tidy the folder');
        await expect.poll(async () => Promise.all((await board.getByTestId('team-worker').all()).map((w) => w.getAttribute('data-worker-id'))), { timeout: 20_000 }).toEqual(['executor-1', 'tester-1']);
      }

      // The planner's `git reset --hard`: a dialog with the worker, the text and the rule; Deny.
      const first = a.board.getByTestId('held-dialog');
      await expect.poll(() => first.getByTestId('held-text').textContent().catch(() => null), { timeout: 60_000 }).toBe('git reset --hard');
      expect(await first.getByTestId('held-worker').textContent()).toBe('executor-1');
      expect(await first.getByTestId('held-findings').textContent()).toMatch(/high\s*git reset --hard/);
      await a.page.screenshot({ path: path.join(ARTIFACTS, 'team-held.png') });
      await first.getByTestId('held-deny').click();

      // The next one is approved from the second dashboard, and runs in the worker.
      const second = b.board.getByTestId('held-dialog');
      await expect.poll(() => second.getByTestId('held-text').textContent().catch(() => null), { timeout: 60_000 }).toBe('rm -rf approved-dir && echo approved-ran');
      await second.getByTestId('held-approve').click();
      const ready = await boardUntil(client, runId, () => !existsSync(approvedDir), 'the approved text ran');
      const [executor, tester] = ready.workers;
      expect(await workerScreen(executor?.pane_id ?? null)).not.toContain('git reset');

      // Ctrl+Enter goes to the focused worker only; Ctrl+Shift+Enter to both.
      await b.board.locator('[data-testid="team-worker"][data-worker-id="tester-1"]').getByTestId('worker-focus').click();
      const composer = b.board.getByTestId('team-composer');
      await composer.fill('echo only-for-$((6*7)) > tester.txt');
      await composer.press('Control+Enter');
      await expect.poll(() => existsSync(path.join(work, 'tester.txt')), { timeout: 20_000 }).toBe(true);
      expect(readFileSync(path.join(work, 'tester.txt'), 'utf8')).toBe('only-for-42\n');
      await expect.poll(() => composer.inputValue()).toBe('');
      await composer.fill('echo seen-by-$((2*3))');
      await composer.press('Control+Shift+Enter');
      for (const worker of [executor, tester]) await expect.poll(() => workerScreen(worker?.pane_id ?? null), { timeout: 20_000 }).toMatch(/^seen-by-6$/m);
      expect(await workerScreen(executor?.pane_id ?? null)).not.toContain('only-for');

      // A person takes the executor over in its own terminal; the run goes on.
      await a.board.locator('[data-testid="team-worker"][data-worker-id="executor-1"]').getByTestId('worker-terminal').click();
      await a.page.keyboard.type('echo typed-by-$((3*5))');
      await a.page.keyboard.press('Enter');
      await expect.poll(() => workerScreen(executor?.pane_id ?? null), { timeout: 20_000 }).toMatch(/^typed-by-15$/m);
      expect(await a.board.getByTestId('team-state').textContent()).toBe('running');

      // Marked done on the first board: the planner's wait ends, and it completes the run.
      await a.board.locator('[data-testid="team-worker"][data-worker-id="executor-1"]').getByTestId('worker-mark-completed').click();
      for (const { board } of [a, b]) await expect.poll(() => board.getByTestId('team-state').textContent(), { timeout: 60_000 }).toBe('completed');
      expect(await b.board.getByTestId('team-summary').textContent()).toBe('the folder is tidy');
      await b.board.getByTestId('team-report-toggle').click();
      await expect.poll(() => b.board.getByTestId('report-text').textContent(), { timeout: 20_000 }).toContain('The executor removed approved-dir.');
      await b.page.screenshot({ path: path.join(ARTIFACTS, 'team-completed.png') });

      // The planner got a clear answer to each held text; the record has both decisions and the sends.
      const results = readFileSync(log, 'utf8').trim().split('\n').slice(1).map((line) => JSON.parse(line) as { ok: boolean; error?: { code: string } });
      expect(results.slice(1, 3).map((r) => r.ok || r.error?.code)).toEqual(['FORBIDDEN', true]);
      const entries = (await client.teamRunEvents(runId, { limit: 500 })).entries;
      expect(entries.filter((e) => e.kind === 'held').map((e) => e['text'])).toEqual(['git reset --hard', 'rm -rf approved-dir && echo approved-ran']);
      expect(entries.filter((e) => e.kind === 'answer').map((e) => e['decision'])).toEqual(['deny', 'allow']);
      expect(entries.filter((e) => e.kind === 'send').map((e) => e['workers'])).toEqual([['tester-1'], ['executor-1', 'tester-1']]);
      expect(entries.filter((e) => e.kind === 'mark').map((e) => e['mark'])).toEqual(['completed']);
    } finally {
      await a.page.close();
      await b.page.close();
      await client.teamRunEnd(runId, { closeAgents: true }).catch(() => undefined);
    }
  });
});
