/**
 * A controller daemon and two nodes end to end (issue 26), every piece real: a nats-server, the
 * daemon started in this process with the cluster on (the bridge's `cluster`, as `--cluster`
 * gives it; no backend of its own, so every run goes to a node), and two `switchboard node`
 * processes with the shell backend: `n1` labelled `gpu`, `n2` labelled `cpu`. Through the built
 * CLI against the daemon's home: `runs nodes --json` lists both with their labels and backend; a
 * `run shell … --labels gpu` runs on n1 and one with `--labels cpu` on n2, each to `completed`
 * with its output; `--labels nope` fails LIMIT_EXCEEDED naming the labels. n1 offers a git
 * repository `app` (`--repo app=PATH`): `run shell … --repo app` runs on n1 in a worktree of it and
 * ends with a patch event. The HTTP API on the dashboard's port answers the same nodes, and the
 * dashboard in Chromium lists both nodes (n1 with its repository), says which node a run went on,
 * and a repository run's drawer names its repository and branch. The ledger is SQLite or PostgreSQL by $SWITCHBOARD_TEST_LEDGER.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNatsOptions } from '../../src/cluster/index.js';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import type { RunEventInfo, RunViewInfo } from '../../src/protocol/methods.js';
import { ARTIFACTS, useChromium } from '../support/chromium.js';
import { runCli } from '../support/cli.js';
import { startTestDaemon } from '../support/daemon.js';
import { startNatsServer, type NatsTestServer } from '../support/nats-server.js';
import { until } from '../support/processes.js';
import { tempDir } from '../support/shell.js';
import { apiClient } from '../support/sse.js';
import { startSwitchboardNode, type SwitchboardNode } from '../support/switchboard-node.js';
import { useTestLedger } from '../support/test-ledger.js';

/** A bound on a wait for something that must happen; never a measure of how fast it did. */
const WAIT_MS = 60_000;

const testLedger = useTestLedger();
// The controller's and the nodes' sandbox: this file's scratch folder, known before anything starts.
const scratch = tempDir('sb-cluster-daemon-');
const work = path.join(scratch.dir, 'work');
const home = path.join(scratch.dir, 'home');
const policyFile = path.join(scratch.dir, 'policy.yaml');
/** n1's repository `app`: a clone on this machine. */
const appRepo = path.join(scratch.dir, 'app');

let server: NatsTestServer | undefined;
let daemon: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
let client: SwitchboardClient | undefined;
const nodes: SwitchboardNode[] = [];
/** The runs the CLI ran, by the label they asked for; the dashboard's part looks for them. */
const ran = new Map<string, RunViewInfo>();

const need = <T>(value: T | undefined): T => {
  if (value === undefined) throw new Error('the cluster has not started');
  return value;
};

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(policyFile, `sandbox:\n  roots: [${JSON.stringify(scratch.dir)}]\n`);
  mkdirSync(appRepo);
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: appRepo, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
  git('init', '--quiet', '-b', 'main');
  writeFileSync(path.join(appRepo, 'README.md'), 'app\n');
  git('add', '.');
  git('commit', '--quiet', '-m', 'first');
  server = await startNatsServer();
  const ledger = await testLedger.daemonLedger();
  daemon = await startTestDaemon({ home, dashboard: { port: 0 }, bridge: { backends: [], policyFile, cluster: { nats: parseNatsOptions({ url: server.url }) }, ...(ledger ? { ledger } : {}) } });
  client = await connect({ home });
  const url = server.url;
  // Both at once (each a tsx start); every one started is stopped after, even when the other fails.
  const started = await Promise.allSettled([startSwitchboardNode({ url, scratch: scratch.dir, name: 'n1', labels: ['gpu'], repos: { app: appRepo } }), startSwitchboardNode({ url, scratch: scratch.dir, name: 'n2', labels: ['cpu'] })]);
  for (const s of started) if (s.status === 'fulfilled') nodes.push(s.value);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
}, 3 * WAIT_MS);

afterAll(async () => {
  client?.close();
  // The nodes leave first (SIGTERM, their groups killed after), then the controller, then NATS.
  await Promise.all(nodes.map((n) => n.stop()));
  await daemon?.stop();
  await server?.stop();
  scratch.cleanup();
}, 3 * WAIT_MS);

/** What `runs nodes --json` and `run_nodes` say of the two nodes, in name order. */
const bothNodes = [
  expect.objectContaining({ name: 'n1', labels: ['gpu'], clis: [expect.objectContaining({ name: 'shell' })], repos: ['app'], slots: expect.objectContaining({ total: 2 }) }),
  expect.objectContaining({ name: 'n2', labels: ['cpu'], clis: [expect.objectContaining({ name: 'shell' })], repos: [], slots: expect.objectContaining({ total: 2 }) }),
];

interface NodesAnswer {
  cluster: boolean;
  nodes: { name: string }[];
}
const byName = (answer: NodesAnswer): NodesAnswer => ({ ...answer, nodes: [...answer.nodes].sort((a, b) => a.name.localeCompare(b.name)) });

/** `switchboard run shell PROMPT --labels L --cwd work --json`: its events, the run it ends with, and how it exited. */
function runOnLabels(prompt: string, labels: string): Promise<{ code: number; events: RunEventInfo[]; run: RunViewInfo | undefined; stdout: string; stderr: string }> {
  return runShell(prompt, ['--labels', labels, '--cwd', work]);
}

/** `switchboard run shell PROMPT … --json` with `options`: its events, the run it ends with, and how it exited. */
async function runShell(prompt: string, options: readonly string[]): Promise<{ code: number; events: RunEventInfo[]; run: RunViewInfo | undefined; stdout: string; stderr: string }> {
  const result = await runCli(home, ['run', 'shell', prompt, ...options, '--json'], { timeoutMs: WAIT_MS });
  const lines = result.stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
  const last = lines.at(-1);
  const run = last && 'run' in last ? (last.run as RunViewInfo) : undefined;
  const events = lines.filter((l) => 'seq' in l) as unknown as RunEventInfo[];
  return { code: result.code, events, run, stdout: result.stdout, stderr: result.stderr };
}

const tokensOf = (events: readonly RunEventInfo[]): string => events.map((e) => (e.type !== 'token' ? '' : e.schema_version === 'v2' ? String(e.data.text) : e.text)).join('');

describe('a controller daemon with two nodes, through the CLI, the HTTP API and the dashboard', () => {
  it('`runs nodes --json` lists both nodes with their labels and the shell backend', { timeout: WAIT_MS }, async () => {
    const c = need(client);
    await until(async () => (await c.runNodes()).nodes.length === 2, 'the controller to see both nodes', WAIT_MS);
    const listed = await runCli(home, ['runs', 'nodes', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(byName(JSON.parse(listed.stdout) as NodesAnswer)).toEqual({ cluster: true, nodes: bothNodes });
  });

  it('a run with --labels gpu runs on n1 and one with --labels cpu on n2, each to completed with its output', { timeout: 2 * WAIT_MS }, async () => {
    for (const [label, node] of [
      ['gpu', 'n1'],
      ['cpu', 'n2'],
    ] as const) {
      const result = await runOnLabels(`echo from-node ${label}`, label);
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.run).toMatchObject({ status: 'completed', node, backend: 'shell', cwd: work });
      expect(tokensOf(result.events)).toContain(`from-node ${label}`);
      expect(result.events.at(-1)).toMatchObject({ type: 'done' });
      ran.set(label, need(result.run));
    }
  });

  it('a run with --labels nope fails LIMIT_EXCEEDED, naming the labels, with a nonzero exit', { timeout: WAIT_MS }, async () => {
    const result = await runOnLabels('echo never', 'nope');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/no node of the cluster can take a shell run: none has it with the labels nope/);
    expect(JSON.parse(result.stdout.trim())).toMatchObject({ status: 'error', error: { code: 'LIMIT_EXCEEDED', details: { labels: ['nope'] } } });
    // Nothing was run for it.
    expect((await need(client).runList({ limit: 50 })).runs.filter((r) => r.prompt === 'echo never')).toEqual([]);
  });

  it('a run with --repo app runs on n1, the node that has it, in a worktree on a branch of its own, and ends with a patch event', { timeout: WAIT_MS }, async () => {
    const result = await runShell('printf made > made.txt', ['--repo', 'app']);
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const { run } = result;
    expect(run).toMatchObject({ status: 'completed', node: 'n1', cwd: '.', repo: { name: 'app', branch: `switchboard/runs/${run?.id ?? ''}`, push: false } });
    expect(result.events.find((e) => e.type === 'patch')).toMatchObject({ data: { repo: 'app', files: [{ path: 'made.txt', change: 'added' }] } });
    ran.set('repo', need(run));
  });

  it('`runs interrupt ID` stops a run going on a node (the shell has no turn of its own to end: it is cancelled)', { timeout: 2 * WAIT_MS }, async () => {
    const c = need(client);
    const { run } = await c.runSubmit({ backend: 'shell', prompt: 'echo started; sleep 600', cwd: work, labels: ['cpu'] });
    await until(async () => ['running', 'streaming'].includes((await c.runGet(run.id)).run.status), `run ${run.id} going on its node`, WAIT_MS);
    const interrupted = await runCli(home, ['runs', 'interrupt', run.id, '--json'], { timeoutMs: WAIT_MS });
    expect(interrupted.code, interrupted.stderr).toBe(0);
    expect(JSON.parse(interrupted.stdout)).toMatchObject({ run: { id: run.id, node: 'n2' } });
    await until(async () => (await c.runGet(run.id)).run.status === 'cancelled', `run ${run.id} cancelled`, WAIT_MS);
    expect((await c.runGet(run.id)).run).toMatchObject({ status: 'cancelled', reason: 'cancelled_by_user', message: 'the turn was interrupted by the caller', node: 'n2' });
  });

  it("GET /api/v2/agent/nodes on the dashboard's port answers the same nodes", { timeout: WAIT_MS }, async () => {
    const d = need(daemon).daemon;
    const api = apiClient(`http://127.0.0.1:${need(d.dashboard).port}`, d.token);
    const res = await api.call('GET', '/api/v2/agent/nodes');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(byName(res.body as NodesAnswer)).toEqual({ cluster: true, nodes: bothNodes });
    expect((await apiClient(api.base, 'not-the-token').call('GET', '/api/v2/agent/nodes')).status).toBe(401);
  });

  describe('the dashboard in Chromium', () => {
    const browser = useChromium(WAIT_MS);

    it('lists n1 and n2 as cluster nodes (n1 with its repository), says a run went on n1, and names a repository run\'s repository and branch', { timeout: 2 * WAIT_MS }, async () => {
      const onGpu = ran.get('gpu');
      if (onGpu === undefined) throw new Error('the run on n1 did not run (see the test before)');
      const page = await browser().newPage({ viewport: { width: 1400, height: 900 } });
      try {
        await page.goto(need(daemon).daemon.dashboardLoginUrl());
        await page.getByTestId('run-list').waitFor({ timeout: WAIT_MS });
        const items = page.getByTestId('node-list').getByTestId('node-item');
        await expect.poll(async () => (await Promise.all((await items.all()).map((i) => i.getAttribute('data-node')))).sort(), { timeout: WAIT_MS }).toEqual(['n1', 'n2']);
        expect(await page.locator('[data-testid="node-item"][data-node="n1"]').textContent()).toContain('gpu');
        expect(await page.locator('[data-testid="node-item"][data-node="n2"]').textContent()).toContain('cpu');
        expect(await page.locator('[data-testid="node-item"][data-node="n1"]').textContent()).toContain('repos app');
        const line = page.locator(`[data-testid="run-item"][data-run-id="${onGpu.id}"]`);
        await expect.poll(() => line.textContent(), { timeout: WAIT_MS }).toContain('on n1');
        expect(await line.getAttribute('data-status')).toBe('completed');
        await page.screenshot({ path: path.join(ARTIFACTS, 'cluster-nodes.png') });
        const inRepo = ran.get('repo');
        if (inRepo === undefined) throw new Error('the repository run did not run (see the test before)');
        await page.locator(`[data-testid="run-item"][data-run-id="${inRepo.id}"]`).click();
        const drawer = page.locator(`[data-testid="run-drawer"][data-run-id="${inRepo.id}"]`);
        await expect.poll(() => drawer.getByTestId('run-drawer-repo').textContent(), { timeout: WAIT_MS }).toBe(`app · switchboard/runs/${inRepo.id}`);
      } finally {
        await page.close();
      }
    });
  });
});
