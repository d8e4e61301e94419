/**
 * The dashboard in Debian's Chromium (playwright-core), against a real daemon: log in with the
 * one-time link, open a shell pane from the form, type a command into its terminal and see the
 * output; open a real Claude Code pane against the scripted model server, prompt it, see the
 * approval banner, click Approve, see the file written and the state back to idle, and the
 * structured view with the reply. Screenshots go to test-artifacts/browser/.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelServer } from '../../../src/model-server/index.js';
import { useTestDaemon } from '../../support/daemon.js';
import { ARTIFACTS, launchChromium } from '../../support/chromium.js';
import { tempDir } from '../../support/shell.js';
import { useAgentBinaries } from '../agent-flow.js';


useAgentBinaries();
const t = useTestDaemon({ dashboard: { port: 0 } });
let browser: Browser;
let model: ModelServer;
const dirs: { cleanup: () => void }[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  model = await ModelServer.start({
    scenario: {
      name: 'dashboard',
      title: 'Scripted session for the dashboard',
      rules: [
        {
          match: 'write a file',
          steps: [
            { tool: 'shell', command: 'echo hello-from-browser > tool_out.txt && cat tool_out.txt', description: 'Write tool_out.txt', escalate: true },
            { text: 'Done: wrote tool_out.txt.' },
          ],
        },
      ],
    },
  });
});

afterAll(async () => {
  await browser.close();
  // The agents first: a CLI still running would write into its home while it is being removed.
  await Promise.all(t.daemon.panes.list().map((pane) => t.daemon.panes.remove(pane.id, { graceMs: 1_000 })));
  await model.close();
  for (const d of dirs) d.cleanup();
});

async function openDashboard(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(t.daemon.dashboardLoginUrl());
  await page.getByTestId('new-pane').waitFor();
  return page;
}

/** The text xterm.js shows for a pane (its rendered rows). */
async function terminalText(pane: Locator): Promise<string> {
  return pane.locator('.xterm-rows').innerText();
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
}

describe('the dashboard in Chromium', () => {
  it('opens a shell pane from the form; typing runs a command; after every socket drops, nothing is lost or doubled', { timeout: 90_000 }, async () => {
    const page = await openDashboard();
    try {
      await page.getByTestId('new-pane-kind-shell').check({ force: true });
      await page.getByTestId('new-pane-cwd').fill(t.work);
      await page.getByTestId('new-pane-title').fill('browser-shell');
      await page.getByTestId('new-pane-submit').click();
      const pane = page.getByTestId('pane').filter({ has: page.getByTestId('pane-title').filter({ hasText: 'browser-shell' }) });
      await pane.waitFor();
      await pane.getByTestId('terminal').click();
      await page.keyboard.type('echo browser-$((6*7))');
      await page.keyboard.press('Enter');
      await expect.poll(() => terminalText(pane), { timeout: 20_000 }).toContain('browser-42');
      // The daemon's own view agrees: the command ran in the pane.
      const paneId = await pane.getAttribute('data-pane-id');
      expect(paneId).toBeTruthy();
      expect(t.daemon.panes.get(paneId ?? '').readText(20).lines.join('\n')).toContain('browser-42');
      await shot(page, 'shell-pane');

      // Every socket drops; output while the browser is away is not lost, and nothing is drawn twice.
      const sockets = t.daemon.dashboardServer?.clientCount ?? 0;
      expect(sockets).toBeGreaterThanOrEqual(2);
      t.daemon.dashboardServer?.disconnectClients();
      t.daemon.panes.get(paneId ?? '').sendText('echo during-outage-$((1+1))', true);
      await expect.poll(() => terminalText(pane), { timeout: 20_000 }).toContain('during-outage-2');
      await expect.poll(() => page.getByTestId('connection-status').getAttribute('data-status'), { timeout: 20_000 }).toBe('open');
      await expect.poll(() => t.daemon.dashboardServer?.clientCount ?? 0, { timeout: 20_000 }).toBeGreaterThanOrEqual(sockets);
      const count = (text: string, what: string): number => text.split(what).length - 1;
      const after = await terminalText(pane);
      expect(count(after, 'browser-42')).toBe(1);
      expect(count(after, 'during-outage-2')).toBe(1);
      await pane.getByTestId('log-toggle').click();
      const log = pane.getByTestId('log-view');
      await expect.poll(async () => count(await log.innerText(), 'during-outage-2'), { timeout: 20_000 }).toBe(1);
      expect(count(await log.innerText(), 'browser-42')).toBe(1);
      await shot(page, 'shell-after-reconnect');

      // The layout survives a reload: the maximized pane is still maximized.
      await pane.getByTestId('maximize').click();
      await page.reload();
      await pane.waitFor();
      await expect.poll(() => pane.getByTestId('maximize').getAttribute('aria-pressed')).toBe('true');
      await pane.getByTestId('maximize').click();
      await expect.poll(() => pane.getByTestId('maximize').getAttribute('aria-pressed')).toBe('false');
    } finally {
      await page.close();
    }
  });

  it('runs a real Claude Code pane: the approval banner, Approve, the file, idle again, and the structured view', { timeout: 240_000 }, async () => {
    const home = tempDir('sb-browser-claude-home-');
    const work = tempDir('sb-browser-claude-work-');
    dirs.push(home, work);
    const page = await openDashboard();
    try {
      await page.getByTestId('new-pane-kind-agent').check({ force: true });
      await page.getByTestId('new-pane-agent').selectOption('claude');
      await page.getByTestId('new-pane-cwd').fill(work.dir);
      await page.getByTestId('new-pane-title').fill('browser-claude');
      await page.getByTestId('new-pane-advanced').locator('summary').click();
      await page.getByTestId('new-pane-agent-home').fill(home.dir);
      await page.getByTestId('new-pane-model-url').fill(model.url);
      await page.getByTestId('new-pane-submit').click();
      const pane = page.getByTestId('pane').filter({ has: page.getByTestId('pane-title').filter({ hasText: 'browser-claude' }) });
      await pane.waitFor({ timeout: 120_000 });
      await expect.poll(() => pane.getByTestId('state-badge').getAttribute('data-state'), { timeout: 120_000 }).toBe('idle');
      await shot(page, 'claude-idle');

      await pane.getByTestId('terminal').click();
      await page.keyboard.type('write a file please');
      // Claude Code reads a burst ending in Enter as a paste: let the text land first.
      await expect.poll(() => terminalText(pane), { timeout: 10_000 }).toContain('write a file please');
      await page.keyboard.press('Enter');
      const banner = pane.getByTestId('approval-banner');
      await banner.waitFor({ timeout: 60_000 });
      await expect.poll(() => banner.innerText()).toContain('tool_out.txt');
      await shot(page, 'claude-approval');
      expect(existsSync(path.join(work.dir, 'tool_out.txt'))).toBe(false);
      await banner.getByTestId('approve').click();

      await expect.poll(() => existsSync(path.join(work.dir, 'tool_out.txt')) && readFileSync(path.join(work.dir, 'tool_out.txt'), 'utf8'), { timeout: 60_000 }).toBe('hello-from-browser\n');
      await expect.poll(() => terminalText(pane), { timeout: 60_000 }).toContain('Done: wrote tool_out.txt.');
      await expect.poll(() => pane.getByTestId('state-badge').getAttribute('data-state'), { timeout: 60_000 }).toBe('idle');
      await expect(banner.count()).resolves.toBe(0);
      await shot(page, 'claude-done');

      await pane.getByTestId('log-toggle').click();
      const log = pane.getByTestId('log-view');
      await expect.poll(() => log.innerText(), { timeout: 20_000 }).toContain('Done: wrote tool_out.txt.');
      await shot(page, 'claude-log');
    } finally {
      await page.close();
    }
  });
});
