/**
 * The dashboard's Runs view in Debian's Chromium (playwright-core), against a real daemon whose
 * agent bridge runs the scripted fake backend: runs appear with their states, a finished run opens
 * with its events replayed from the ledger, a live run streams into the drawer, and Cancel ends it
 * (`cancelled`, in the view and in the ledger), and Stop turn ends a run's turn, keeping its
 * conversation for a follow-up; a run whose CLI said its conversation id offers
 * Resume, which starts a new run on that conversation. Screenshots go to test-artifacts/browser/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeBackend } from '../../../src/runs/backends/fake-backend.js';
import { runServiceOf } from '../../../src/api/index.js';
import { useTestDaemon } from '../../support/daemon.js';
import { ARTIFACTS, launchChromium } from '../../support/chromium.js';
import { tempDir } from '../../support/shell.js';
import { until } from '../../support/processes.js';


// The policy's sandbox is a scratch folder of this file's, known before the daemon starts.
const scratch = tempDir('sb-browser-runs-');
const work = path.join(scratch.dir, 'work');
mkdirSync(work);
const policyFile = path.join(scratch.dir, 'policy.yaml');
writeFileSync(policyFile, `sandbox:\n  roots: [${JSON.stringify(scratch.dir)}]\n`);

const fake = new FakeBackend();
const t = useTestDaemon({ dashboard: { port: 0 }, bridge: { backends: [fake], policyFile } });
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser.close();
  scratch.cleanup();
});

/** An attribute of every element a locator finds, in order. */
async function attributes(locator: Locator, name: string): Promise<(string | null)[]> {
  return Promise.all((await locator.all()).map((l) => l.getAttribute(name)));
}

async function openDashboard(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(t.daemon.dashboardLoginUrl());
  await page.getByTestId('run-list').waitFor();
  return page;
}

describe("the dashboard's Runs view in Chromium", () => {
  it('lists runs with their states, replays a finished one, follows a live one and cancels it', { timeout: 90_000 }, async () => {
    const runs = runServiceOf(t.daemon.services);
    const finished = await runs.submit({ backend: 'fake', prompt: 'tool please', cwd: work });
    await until(async () => (await runs.get(finished.id)).status === 'completed', 'the run to complete');
    const recorded = (await runs.events(finished.id, 0, 1_000)).events;
    const page = await openDashboard();
    try {
      const item = page.locator(`[data-testid="run-item"][data-run-id="${finished.id}"]`);
      await expect.poll(() => item.getAttribute('data-status'), { timeout: 20_000 }).toBe('completed');
      await item.click();
      const drawer = page.locator(`[data-testid="run-drawer"][data-run-id="${finished.id}"]`);
      // The replay shows every recorded event, in order, the same as the ledger's.
      await expect.poll(() => drawer.getByTestId('run-event').count(), { timeout: 20_000 }).toBe(recorded.length);
      expect(await attributes(drawer.getByTestId('run-event'), 'data-seq')).toEqual(recorded.map((e) => String(e.seq)));
      expect(await attributes(drawer.getByTestId('run-event'), 'data-type')).toEqual(recorded.map((e) => e.type));
      expect(await drawer.getByTestId('run-cancel').count()).toBe(0);
      await page.screenshot({ path: path.join(ARTIFACTS, 'runs-replay.png') });
      await drawer.getByTestId('run-drawer-close').click();

      // A run that says nothing until cancelled: it streams its first events, then Cancel ends it.
      const live = await runs.submit({ backend: 'fake', prompt: 'silent', cwd: work });
      const liveItem = page.locator(`[data-testid="run-item"][data-run-id="${live.id}"]`);
      await liveItem.click();
      const liveDrawer = page.locator(`[data-testid="run-drawer"][data-run-id="${live.id}"]`);
      await expect.poll(() => liveDrawer.locator('[data-testid="run-event"][data-type="state"]').count(), { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
      await liveDrawer.getByTestId('run-cancel').click();
      await expect.poll(() => liveDrawer.locator('[data-testid="run-event"][data-type="done"]').count(), { timeout: 20_000 }).toBe(1);
      await expect.poll(() => liveItem.getAttribute('data-status'), { timeout: 20_000 }).toBe('cancelled');
      expect(await runs.get(live.id)).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user' });
      // What the drawer showed live is what the ledger holds.
      expect(await attributes(liveDrawer.getByTestId('run-event'), 'data-seq')).toEqual((await runs.events(live.id, 0, 1_000)).events.map((e) => String(e.seq)));
      await page.screenshot({ path: path.join(ARTIFACTS, 'runs-cancelled.png') });
    } finally {
      await page.close();
    }
  });

  it("stops a live run's turn from its drawer, keeping the conversation for the next prompt; a run that keeps none offers only cancel", { timeout: 90_000 }, async () => {
    const runs = runServiceOf(t.daemon.services);
    const single = await runs.submit({ backend: 'fake', prompt: 'silent', cwd: work, keep_alive: false });
    const live = await runs.submit({ backend: 'fake', prompt: 'silent, in a conversation', cwd: work });
    const page = await openDashboard();
    try {
      await page.locator(`[data-testid="run-item"][data-run-id="${single.id}"]`).click();
      const singleDrawer = page.locator(`[data-testid="run-drawer"][data-run-id="${single.id}"]`);
      await singleDrawer.getByTestId('run-cancel').waitFor({ timeout: 20_000 });
      expect(await singleDrawer.getByTestId('run-interrupt').count()).toBe(0);
      await singleDrawer.getByTestId('run-cancel').click();
      await expect.poll(async () => (await runs.get(single.id)).status, { timeout: 20_000 }).toBe('cancelled');
      await singleDrawer.getByTestId('run-drawer-close').click();

      const item = page.locator(`[data-testid="run-item"][data-run-id="${live.id}"]`);
      await item.click();
      const drawer = page.locator(`[data-testid="run-drawer"][data-run-id="${live.id}"]`);
      await expect.poll(() => drawer.locator('[data-testid="run-event"][data-type="state"]').count(), { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
      await drawer.getByTestId('run-interrupt').click();
      await expect.poll(() => drawer.locator('[data-testid="run-event"][data-type="done"]').count(), { timeout: 20_000 }).toBe(1);
      await expect.poll(() => item.getAttribute('data-status'), { timeout: 20_000 }).toBe('cancelled');
      expect(await runs.get(live.id)).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user', message: 'the turn was interrupted by the caller' });
      // The CLI's own interrupt: the conversation is open still, and a follow-up goes on in it.
      expect(fake.interrupted).toContain(live.id);
      expect(fake.open.has(live.id)).toBe(true);
      const next = await runs.submit({ backend: 'fake', prompt: 'hello again', parent: live.id });
      await until(async () => (await runs.get(next.id)).status === 'completed', 'the follow-up to complete');
      await page.screenshot({ path: path.join(ARTIFACTS, 'runs-interrupted.png') });
    } finally {
      await page.close();
    }
  });

  it("resumes an ended run's conversation from its drawer, and offers no resume where the CLI said no conversation", { timeout: 90_000 }, async () => {
    const runs = runServiceOf(t.daemon.services);
    const talked = await runs.submit({ backend: 'fake', prompt: 'start a conversation', cwd: work, keep_alive: false });
    const plain = await runs.submit({ backend: 'fake', prompt: 'hello', cwd: work, keep_alive: false });
    await until(async () => (await runs.get(talked.id)).status === 'completed' && (await runs.get(plain.id)).status === 'completed', 'both runs to complete');
    const page = await openDashboard();
    try {
      await page.locator(`[data-testid="run-item"][data-run-id="${plain.id}"]`).click();
      const plainDrawer = page.locator(`[data-testid="run-drawer"][data-run-id="${plain.id}"]`);
      await expect.poll(() => plainDrawer.locator('[data-testid="run-event"][data-type="done"]').count(), { timeout: 20_000 }).toBe(1);
      expect(await plainDrawer.getByTestId('run-resume').count()).toBe(0);
      await plainDrawer.getByTestId('run-drawer-close').click();

      await page.locator(`[data-testid="run-item"][data-run-id="${talked.id}"]`).click();
      const drawer = page.locator(`[data-testid="run-drawer"][data-run-id="${talked.id}"]`);
      await drawer.getByTestId('run-resume').waitFor({ timeout: 20_000 });
      // A local run: no node to choose.
      expect(await drawer.getByTestId('run-resume-node').count()).toBe(0);
      await drawer.getByTestId('run-resume-prompt').fill('hello again');
      await drawer.getByTestId('run-resume-submit').click();
      let resumedId: string | undefined;
      await until(async () => {
        resumedId = (await runs.list({ limit: 20 })).runs.find((r) => r.parent === talked.id)?.id;
        return resumedId !== undefined && (await runs.get(resumedId)).status === 'completed';
      }, 'the resumed run to complete');
      expect(await runs.get(resumedId as string)).toMatchObject({ prompt: 'hello again', parent: talked.id, agent_session: `fake-${talked.id}`, cwd: work });
      expect(fake.resumed).toEqual([`fake-${talked.id}`]);
      // The drawer moves to the new run.
      await page.locator(`[data-testid="run-drawer"][data-run-id="${resumedId as string}"]`).waitFor({ timeout: 20_000 });
      await page.screenshot({ path: path.join(ARTIFACTS, 'runs-resumed.png') });
    } finally {
      await page.close();
    }
  });
});
