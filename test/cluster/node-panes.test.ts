/**
 * Panes on other hosts (issue 26), every piece real: a nats-server, a controller daemon started in
 * this process with the cluster on, and a node (`startClusterNode`, as `switchboard node` starts
 * it) with a program in a pane of its own, as a terminal run puts its CLI in one. From the
 * controller, through the same client and the dashboard's pane socket a person uses: the node's
 * pane is listed as `n1/<pane>` beside the controller's, read, waited on, typed into and resized
 * by the pane methods; told to subscribers as `pane_created`; shown on the dashboard in Chromium,
 * marked with its node, typed into there and its log shown; its log read and followed by the
 * log methods; attached to as a terminal over the pane socket (replay, typing, resize, the
 * program's exit); and what a node cannot answer is a stable error with the controller still
 * answering.
 */
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawn as spawnPty } from 'node-pty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parseNatsOptions } from '../../src/cluster/index.js';
import { connect, type SwitchboardClient } from '../../src/client/index.js';
import type { PaneInfo } from '../../src/protocol/methods.js';
import { silentLogger } from '../../src/core/logger.js';
import { Screen } from '../../src/pane/screen.js';
import { startClusterNode, type StartedClusterNode } from '../../src/daemon/cluster-node.js';
import { ARTIFACTS, useChromium } from '../support/chromium.js';
import { CLI, cleanEnv, runCli } from '../support/cli.js';
import { startTestDaemon } from '../support/daemon.js';
import { startNatsServer, type NatsTestServer } from '../support/nats-server.js';
import { until } from '../support/processes.js';
import { tempDir } from '../support/shell.js';

/** A bound on a wait for something that must happen; never a measure of how fast it did. */
const WAIT_MS = 60_000;

/** The node's program: says each line it reads back, and ends on `bye`. */
const ECHO_PROGRAM = `
process.stdout.write('ready\\n');
let buffer = '';
process.stdin.on('data', (data) => {
  buffer += data.toString();
  let at;
  while ((at = buffer.search(/[\\r\\n]/)) >= 0) {
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    if (line === '') continue;
    if (line === 'size') process.stdout.write('size ' + process.stdout.columns + 'x' + process.stdout.rows + '\\n');
    else if (line === 'bye') process.exit(3);
    else process.stdout.write('said: ' + line + '\\n');
  }
});
`;

const scratch = tempDir('sb-node-panes-');
let server: NatsTestServer | undefined;
let controller: Awaited<ReturnType<typeof startTestDaemon>> | undefined;
let client: SwitchboardClient | undefined;
let node: StartedClusterNode | undefined;
/** The node's pane, as the controller names it. */
let remoteId = '';

const need = <T>(value: T | undefined): T => {
  if (value === undefined) throw new Error('the cluster has not started');
  return value;
};

beforeAll(async () => {
  server = await startNatsServer();
  const nats = parseNatsOptions({ url: server.url });
  controller = await startTestDaemon({ dashboard: { port: 0 }, bridge: { backends: [], cluster: { nats } } });
  client = await connect({ home: controller.home });
  // The node opens panes for the controller (--panes), in its policy's sandbox: the scratch folder.
  const nodeHome = path.join(scratch.dir, 'node-home');
  mkdirSync(nodeHome, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(nodeHome, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(scratch.dir)}]\n`, { mode: 0o600 });
  node = await startClusterNode({ home: nodeHome, nats, name: 'n1', slots: 1, backends: [], logger: silentLogger, openPanes: true });
  const pane = node.panes.create({ argv: [process.execPath, '-e', ECHO_PROGRAM], cwd: scratch.dir, title: 'echo on n1' });
  remoteId = `n1/${pane.id}`;
  // The controller knows the node once its lease is in the directory.
  const c = client;
  await until(async () => (await c.runNodes()).nodes.some((n) => n.name === 'n1'), 'the controller knows node n1', WAIT_MS);
}, 2 * WAIT_MS);

afterAll(async () => {
  client?.close();
  await node?.close();
  await controller?.stop();
  await server?.stop();
  scratch.cleanup();
}, 2 * WAIT_MS);

describe("a node's pane, from the controller", () => {
  it('is listed as <node>/<pane> with its node, beside the controller’s own panes', { timeout: WAIT_MS }, async () => {
    const c = need(client);
    const own = await c.createPane({ argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], cwd: scratch.dir, title: 'here' });
    try {
      // A node that does not answer a listing in time is left out of it: asked again until it answers.
      let panes: PaneInfo[] = [];
      await until(async () => (panes = (await c.list()).panes).some((p) => p.pane_id === remoteId), 'the node pane in the listing', WAIT_MS);
      expect(panes).toContainEqual(expect.objectContaining({ pane_id: remoteId, node: 'n1', title: 'echo on n1', alive: true }));
      const mine = panes.find((p) => p.pane_id === own.pane_id);
      expect(mine).toBeDefined();
      expect(mine?.node).toBeUndefined();
    } finally {
      await c.remove(own.pane_id, { graceMs: 0 });
    }
  });

  it('a new pane on a node is told to subscribers as pane_created, named <node>/<pane>', { timeout: WAIT_MS }, async () => {
    const c = need(client);
    const created: { pane_id: string; title: string }[] = [];
    const subscription = await c.subscribe({ events: ['exit'] }, { pane_created: (n) => void created.push({ pane_id: n.pane_id, title: n.title }) });
    const pane = need(node).panes.create({ argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], cwd: scratch.dir, title: 'second on n1' });
    try {
      await until(() => created.some((p) => p.pane_id === `n1/${pane.id}`), 'pane_created for the node pane', WAIT_MS);
      expect(created).toContainEqual({ pane_id: `n1/${pane.id}`, title: 'second on n1' });
    } finally {
      await subscription.unsubscribe();
      await need(node).panes.remove(pane.id, { graceMs: 0 });
    }
  });

  it('is typed into, waited on, read and resized by the pane methods', { timeout: WAIT_MS }, async () => {
    const c = need(client);
    await c.waitFor(remoteId, { pattern: 'ready', timeoutMs: 20_000 });
    await c.sendText(remoteId, 'hello from the controller', { addNewline: true });
    const waited = await c.waitFor(remoteId, { pattern: 'said: hello from the controller', timeoutMs: 20_000 });
    expect(waited).toMatchObject({ matched: true });
    expect((await c.getScreen(remoteId)).text).toContain('said: hello from the controller');
    expect((await c.getText(remoteId, { lines: 50 })).text).toContain('said: hello from the controller');
    await c.sendKeys(remoteId, ['k', 'e', 'y', 's', 'Enter']);
    await c.waitFor(remoteId, { pattern: 'said: keys', timeoutMs: 20_000 });
    expect(await c.resize(remoteId, 91, 27)).toEqual({ success: true, cols: 91, rows: 27 });
    await c.sendText(remoteId, 'size', { addNewline: true });
    await c.waitFor(remoteId, { pattern: 'size 91x27', timeoutMs: 20_000 });
    expect(await c.isAlive(remoteId)).toMatchObject({ alive: true });
  });

  it('a pane is opened on a node: a program, in the folder its policy holds; an agent, a folder outside and an unknown node are refused', { timeout: WAIT_MS }, async () => {
    const c = need(client);
    const created = await c.createPane({ node: 'n1', argv: [process.execPath, '-e', ECHO_PROGRAM], title: 'opened on n1' });
    try {
      expect(created.pane_id).toMatch(/^n1\/p/);
      expect(created.title).toBe('opened on n1');
      // On the node, in its sandbox's first root when no cwd is given.
      const opened = need(node).panes.get(created.pane_id.slice('n1/'.length));
      expect(opened.title).toBe('opened on n1');
      // A node that does not answer a listing in time is left out of it: asked again until it answers.
      let listed: PaneInfo | undefined;
      await until(async () => (listed = (await c.list()).panes.find((p) => p.pane_id === created.pane_id)) !== undefined, 'the opened pane in the listing', WAIT_MS);
      expect(listed).toMatchObject({ node: 'n1', cwd: realpathSync(scratch.dir) });
      expect(await c.waitFor(created.pane_id, { pattern: 'ready', timeoutMs: 20_000 })).toMatchObject({ matched: true });
      await c.sendText(created.pane_id, 'opened from the controller', { addNewline: true });
      expect(await c.waitFor(created.pane_id, { pattern: 'said: opened from the controller', timeoutMs: 20_000 })).toMatchObject({ matched: true });
      await expect(c.createPane({ node: 'n1', argv: [process.execPath, '-e', '0'], cwd: path.parse(scratch.dir).root })).rejects.toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('outside the sandbox') });
      await expect(c.createPane({ node: 'n1', agent: 'claude', cwd: scratch.dir })).rejects.toMatchObject({ code: 'INVALID_PARAMS', message: expect.stringContaining('starts as a run') });
      await expect(c.createPane({ node: 'nobody', argv: [process.execPath, '-e', '0'] })).rejects.toMatchObject({ code: 'NODE_UNREACHABLE' });
      await expect(c.createPane({ node: 'no.de', argv: [process.execPath, '-e', '0'] })).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
      // The same from the CLI: `switchboard new --node`, its folder the node's to resolve.
      const cli = await runCli(need(controller).home, ['new', '--node', 'n1', '--cwd', scratch.dir, '--title', 'cli on n1', '--', process.execPath, '-e', 'setInterval(() => {}, 1000)']);
      expect(cli.code).toBe(0);
      const cliPane = cli.stdout.trim();
      expect(cliPane).toMatch(/^n1\/p[0-9a-f]+$/);
      expect(need(node).panes.get(cliPane.slice('n1/'.length)).title).toBe('cli on n1');
      await c.remove(cliPane, { graceMs: 0 });
      const refused = await runCli(need(controller).home, ['new', '--node', 'n1', '--agent', 'claude', '--cwd', scratch.dir]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('an agent on a node starts as a run');
    } finally {
      await c.remove(created.pane_id, { graceMs: 0 });
    }
  });

  it('its log is listed, read, followed as it grows and exported', { timeout: WAIT_MS }, async () => {
    const c = need(client);
    await c.waitFor(remoteId, { pattern: 'ready', timeoutMs: 20_000 });
    const textOf = (messages: { msg: { type: string; content?: string } }[]): string => messages.map(({ msg }) => msg.content ?? '').join('');
    const history = await c.logGetHistory(remoteId);
    expect(history).toMatchObject({ session_id: remoteId, finished: false, evicted: 0 });
    expect(history.messages[0]?.seq).toBe(1);
    expect(textOf(history.messages)).toContain('ready');
    let followed = '';
    const seqs: number[] = [];
    const subscription = await c.logSubscribe(remoteId, { history: false }, {
      log_message: ({ session_id, messages }) => {
        expect(session_id).toBe(remoteId);
        seqs.push(...messages.map((m) => m.seq));
        followed += textOf(messages);
      },
    });
    try {
      await c.sendText(remoteId, 'into the log', { addNewline: true });
      await until(() => followed.includes('said: into the log'), 'the new line followed in the log', WAIT_MS);
      // From where the log was, each message once and in order.
      expect(seqs[0]).toBeGreaterThan(history.last_seq);
      expect(seqs.every((seq, i) => i === 0 || seq === (seqs[i - 1] ?? 0) + 1)).toBe(true);
      expect(followed).not.toContain('ready');
    } finally {
      await subscription.unsubscribe();
    }
    const after = await c.logGetHistory(remoteId, { afterSeq: history.last_seq });
    expect(after.messages.map((m) => m.seq).slice(0, seqs.length)).toEqual(seqs);
    // Exported on the controller, from what the node holds: every message up to the last when it began, once and in order.
    const exported = await c.logExport(remoteId);
    expect(path.dirname(exported.path)).toBe(path.join(need(controller).home, 'exports'));
    expect(path.basename(exported.path)).toMatch(/^n1_p[\w]+-.*\.jsonl$/);
    expect(statSync(exported.path).mode & 0o777).toBe(0o600);
    const lines = readFileSync(exported.path, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { seq: number; msg: { type: string; content?: string } });
    expect(lines).toHaveLength(exported.messages);
    expect(lines.map((m) => m.seq)).toEqual(Array.from({ length: lines.length }, (_, i) => i + 1));
    const full = await c.logGetHistory(remoteId, { limit: 10_000 });
    expect(lines).toEqual(full.messages.slice(0, lines.length));
    expect(textOf(lines)).toContain('said: into the log');
    rmSync(exported.path);
    // Listed with the controller's own sessions, named <node>/<session> with its node.
    const listed = (await c.logSessions()).sessions.find((s) => s.session_id === remoteId);
    expect(listed).toMatchObject({ session_id: remoteId, node: 'n1', kind: 'pane', title: 'echo on n1', finished: false });
    expect(listed?.stats.lastSeq).toBeGreaterThanOrEqual(lines.length);
    await expect(c.logExport('n1/p00000000')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    // Nothing is left of an export that failed.
    expect(readdirSync(path.dirname(exported.path))).toEqual([]);
    await expect(c.logGetHistory('n1/p00000000')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    await expect(c.logSubscribe('nobody/p00000000')).rejects.toMatchObject({ code: 'NODE_UNREACHABLE' });
  });

  it('answers what it cannot do with stable codes, and the controller goes on', { timeout: WAIT_MS }, async () => {
    const c = need(client);
    await expect(c.getText('n1/p00000000')).rejects.toMatchObject({ code: 'PANE_NOT_FOUND' });
    await expect(c.getText('nobody/p00000000')).rejects.toMatchObject({ code: 'NODE_UNREACHABLE' });
    await expect(c.getText('n1/p1/p2')).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    await expect(c.getText('no.de/p1')).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    await expect(c.kill('n1/p00000000')).rejects.toMatchObject({ code: 'PANE_NOT_FOUND' });
    await expect(c.subscribe({ paneId: 'n1/p00000000', events: ['output'] })).rejects.toMatchObject({ code: 'PANE_NOT_FOUND' });
    await expect(c.subscribe({ paneId: 'nobody/p00000000', events: ['output'] })).rejects.toMatchObject({ code: 'NODE_UNREACHABLE' });
    await expect(c.resize(remoteId, 1, 1)).rejects.toMatchObject({ code: 'INVALID_PARAMS' });
    // More than one NATS message takes (the server's max_payload, 1 MiB): said at once, not a timeout.
    await expect(c.sendText(remoteId, 'x'.repeat(1024 * 1024))).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect(await c.isAlive('n1/p00000000')).toEqual({ alive: false });
    expect((await c.getScreen(remoteId)).text).toContain('ready');
  });
});

describe("a node's pane, followed and ended from the controller", () => {
  it('is subscribed to (output with its offsets, screen frames, exit), prompted, killed and removed', { timeout: 2 * WAIT_MS }, async () => {
    const c = need(client);
    const pane = need(node).panes.create({ argv: [process.execPath, '-e', ECHO_PROGRAM], cwd: scratch.dir, title: 'followed on n1', cols: 60, rows: 12 });
    const id = `n1/${pane.id}`;
    await c.waitFor(id, { pattern: 'ready', timeoutMs: 20_000 });
    let output = '';
    let nextOffset: number | undefined;
    const offsetsInOrder: boolean[] = [];
    const paneIds = new Set<string>();
    const rows = new Map<number, string>();
    const frames: { full: boolean; cols: number; rows: number }[] = [];
    const exits: { exit_code: number | null; signal: string | null }[] = [];
    const ended: { code: string; message: string }[] = [];
    // A list of every pane (the dashboard's) hears the node pane's end as `exit` too.
    const listExits: string[] = [];
    const everyPane = await c.subscribe({ events: ['exit'] }, { exit: (n) => void listExits.push(n.pane_id) });
    const subscription = await c.subscribe(
      { paneId: id, events: ['output', 'screen', 'exit'], replay: true },
      {
        output: (n) => {
          paneIds.add(n.pane_id);
          if (nextOffset !== undefined) offsetsInOrder.push(n.offset === nextOffset);
          nextOffset = n.offset + Buffer.byteLength(n.data);
          output += n.data;
        },
        screen: (n) => {
          frames.push({ full: n.full, cols: n.cols, rows: n.rows });
          if (n.full) rows.clear();
          for (const [row, line] of n.changed) rows.set(row, line.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ''));
        },
        exit: (n) => void exits.push({ exit_code: n.exit_code, signal: n.signal }),
        subscription_ended: (n) => void ended.push({ code: n.code, message: n.message }),
      },
    );
    try {
      // The replay: what the program said before the subscription, from the start of its stream.
      await until(() => output.includes('ready'), 'the replayed output', WAIT_MS);
      await until(() => frames.some((f) => f.full) && [...rows.values()].some((l) => l.includes('ready')), 'a full screen frame', WAIT_MS);
      expect(frames[0]).toMatchObject({ full: true, cols: 60, rows: 12 });
      // send_prompt: typed as a plain program takes a prompt, answered live on both streams.
      expect(await c.sendPrompt(id, 'prompted from the controller')).toEqual({ success: true });
      await until(() => output.includes('said: prompted from the controller'), 'the prompt’s answer as output', WAIT_MS);
      await until(() => [...rows.values()].some((l) => l.includes('said: prompted from the controller')), 'the prompt’s answer on the screen frames', WAIT_MS);
      expect(offsetsInOrder.length).toBeGreaterThan(0);
      expect(offsetsInOrder.every(Boolean)).toBe(true);
      expect([...paneIds]).toEqual([id]);
      // kill: the node ends the program; the subscription hears the exit once.
      const killed = await c.kill(id, { signal: 'TERM', graceMs: 5_000 });
      expect(killed).toMatchObject({ success: true, signal: 'SIGTERM' });
      await until(() => exits.length > 0, 'the exit notification', WAIT_MS);
      expect(exits).toEqual([{ exit_code: killed.exit_code, signal: 'SIGTERM' }]);
      expect(await c.isAlive(id)).toMatchObject({ alive: false, signal: 'SIGTERM' });
      await until(() => listExits.includes(id), 'the exit told to the list of every pane', WAIT_MS);
      // remove: the pane is gone from the node and the listing, and its subscription is told it ended.
      expect(await c.remove(id)).toEqual({ success: true });
      await until(() => ended.length > 0, 'subscription_ended', WAIT_MS);
      expect(ended[0]?.code).toBe('PANE_NOT_FOUND');
      expect(need(node).panes.find(pane.id)).toBeUndefined();
      expect((await c.list()).panes.some((p) => p.pane_id === id)).toBe(false);
      await expect(c.remove(id)).rejects.toMatchObject({ code: 'PANE_NOT_FOUND' });
    } finally {
      subscription.dispose();
      await everyPane.unsubscribe();
      if (need(node).panes.find(pane.id)) await need(node).panes.remove(pane.id, { graceMs: 0 });
    }
  });

  it('switchboard attach: this terminal becomes the node’s pane, typed into and resized, until detached', { timeout: 2 * WAIT_MS }, async () => {
    const c = need(client);
    const pane = need(node).panes.create({ argv: [process.execPath, '-e', ECHO_PROGRAM], cwd: scratch.dir, title: 'attached on n1' });
    const id = `n1/${pane.id}`;
    const outer = new Screen({ cols: 100, rows: 20, scrollbackRows: 100 });
    const attach = spawnPty(process.execPath, [CLI, '--home', need(controller).home, 'attach', id], { cols: 100, rows: 20, env: cleanEnv() });
    attach.onData((d) => outer.write(d));
    let running = true as boolean;
    const exited = new Promise<number>((resolve) =>
      attach.onExit(({ exitCode }) => {
        running = false;
        resolve(exitCode);
      }),
    );
    const onOuter = (predicate: () => boolean, what: string): Promise<void> =>
      until(predicate, what, WAIT_MS).catch(() => {
        throw new Error(`attach: never saw ${what}; outer screen:\n${outer.screenLines().join('\n')}`);
      });
    try {
      await onOuter(() => outer.screenLines().includes('ready'), 'the node pane’s screen');
      // attach sizes the pane to this terminal.
      await until(async () => (await c.getScreen(id)).cols === 100, 'the pane sized to the terminal', WAIT_MS);
      attach.write('through attach\r');
      await onOuter(() => outer.screenLines().includes('said: through attach'), 'typed output');
      expect((await c.getText(id, { lines: 10 })).text).toContain('said: through attach');
      attach.resize(80, 15);
      await until(async () => (await c.getScreen(id)).cols === 80, 'the resize', WAIT_MS);
      attach.write('size\r');
      await onOuter(() => outer.screenLines().includes('size 80x15'), 'the program seeing the new size');
      attach.write('\x1d');
      expect(await exited).toBe(0);
      expect(await c.isAlive(id)).toMatchObject({ alive: true });
    } finally {
      if (running) attach.kill();
      outer.dispose();
      await need(node).panes.remove(pane.id, { graceMs: 0 });
    }
  });
});

describe("a node's pane in the dashboard, in Chromium", () => {
  const browser = useChromium(WAIT_MS);

  it('is shown beside the controller’s panes, marked with its node, typed into, killed and closed', { timeout: 2 * WAIT_MS }, async () => {
    const pane = need(node).panes.create({ argv: [process.execPath, '-e', ECHO_PROGRAM], cwd: scratch.dir, title: 'browser on n1' });
    const c = need(client);
    // The node answers listings before the page loads (a node that does not answer in time is left out of the page's one listing).
    await until(async () => (await c.list()).panes.some((p) => p.pane_id === `n1/${pane.id}`), 'the node pane in the listing', WAIT_MS);
    const page = await browser().newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await page.goto(need(controller).daemon.dashboardLoginUrl());
      const card = page.locator(`[data-testid="pane"][data-pane-id="n1/${pane.id}"]`);
      await card.waitFor({ timeout: WAIT_MS });
      expect(await card.getByTestId('pane-node').textContent()).toBe('on n1');
      await expect.poll(() => card.locator('.xterm-rows').innerText(), { timeout: WAIT_MS }).toContain('ready');
      await card.getByTestId('terminal').click();
      await page.keyboard.type('typed in chromium');
      await page.keyboard.press('Enter');
      await expect.poll(() => card.locator('.xterm-rows').innerText(), { timeout: WAIT_MS }).toContain('said: typed in chromium');
      await page.screenshot({ path: path.join(ARTIFACTS, 'cluster-node-pane.png') });
      // Its log, read from the node: what was typed and said, and more as it comes.
      await card.getByTestId('log-toggle').click();
      const log = card.getByTestId('log-view');
      await expect.poll(() => log.innerText(), { timeout: WAIT_MS }).toContain('said: typed in chromium');
      // Exported as a download from what the node holds, as a log here is.
      const [download] = await Promise.all([page.waitForEvent('download', { timeout: WAIT_MS }), card.getByTestId('log-export').click()]);
      expect(download.suggestedFilename()).toBe(`n1_${pane.id}.jsonl`);
      const saved = await download.path();
      const downloaded = readFileSync(saved, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { seq: number; msg: { content?: string } });
      expect(downloaded[0]?.seq).toBe(1);
      expect(downloaded.map((m) => m.msg.content ?? '').join('')).toContain('said: typed in chromium');
      await download.delete();
      await c.sendText(`n1/${pane.id}`, 'while the log is open', { addNewline: true });
      await expect.poll(() => log.innerText(), { timeout: WAIT_MS }).toContain('said: while the log is open');
      await page.screenshot({ path: path.join(ARTIFACTS, 'cluster-node-pane-log.png') });
      await card.getByTestId('log-toggle').click();
      // kill: the node ends the program, and the card hears the exit (it offers close instead).
      await card.getByTestId('kill').click();
      await card.getByTestId('remove').waitFor({ timeout: WAIT_MS });
      expect(need(node).panes.get(pane.id).alive).toBe(false);
      // close: the pane is removed on its node, and its card goes.
      await card.getByTestId('remove').click();
      await card.waitFor({ state: 'detached', timeout: WAIT_MS });
      expect(need(node).panes.find(pane.id)).toBeUndefined();
    } finally {
      await page.close();
      if (need(node).panes.find(pane.id)) await need(node).panes.remove(pane.id, { graceMs: 0 });
    }
  });
  it('is opened from the new pane form on a node the controller lists', { timeout: 2 * WAIT_MS }, async () => {
    const page = await browser().newPage({ viewport: { width: 1400, height: 900 } });
    let opened: string | undefined;
    try {
      await page.goto(need(controller).daemon.dashboardLoginUrl());
      const form = page.getByTestId('new-pane');
      await form.getByTestId('new-pane-kind-shell').check();
      // The form offers the node once it has read the controller's nodes.
      await form.getByTestId('new-pane-node').selectOption('n1', { timeout: WAIT_MS });
      await form.getByTestId('new-pane-command').fill(`${JSON.stringify(process.execPath)} -e ${JSON.stringify(ECHO_PROGRAM.replace(/\n/g, ' '))}`);
      await form.getByTestId('new-pane-title').fill('form on n1');
      await form.getByTestId('new-pane-submit').click();
      const card = page.locator('[data-testid="pane"]', { hasText: 'form on n1' });
      await card.waitFor({ timeout: WAIT_MS });
      opened = (await card.getAttribute('data-pane-id')) ?? undefined;
      expect(opened).toMatch(/^n1\/p/);
      expect(await card.getByTestId('pane-node').textContent()).toBe('on n1');
      await expect.poll(() => card.locator('.xterm-rows').innerText(), { timeout: WAIT_MS }).toContain('ready');
      await card.getByTestId('terminal').click();
      await page.keyboard.type('from the form');
      await page.keyboard.press('Enter');
      await expect.poll(() => card.locator('.xterm-rows').innerText(), { timeout: WAIT_MS }).toContain('said: from the form');
      await page.screenshot({ path: path.join(ARTIFACTS, 'cluster-node-pane-opened.png') });
    } finally {
      await page.close();
      if (opened !== undefined) await need(client).remove(opened, { graceMs: 0 });
    }
  });
});

describe("a node's pane on the dashboard", () => {
  const base = (): string => `http://127.0.0.1:${String(need(controller).daemon.dashboard?.port)}`;

  async function login(): Promise<{ cookie: string; key: string }> {
    const res = await fetch(need(controller).daemon.dashboardLoginUrl(), { redirect: 'manual' });
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const key = /^\/#key=([\w-]+)$/.exec(res.headers.get('location') ?? '')?.[1] ?? '';
    return { cookie, key };
  }

  /** The pane socket of `paneId`, with what it got so far. */
  async function paneSocket(paneId: string): Promise<{ ws: WebSocket; output: () => string; controls: Record<string, unknown>[]; closed: Promise<number> }> {
    const { cookie, key } = await login();
    let output = '';
    const controls: Record<string, unknown>[] = [];
    const ws = new WebSocket(`ws://127.0.0.1:${String(need(controller).daemon.dashboard?.port)}/ws/pane/${encodeURIComponent(paneId)}`, ['switchboard', `sb-key.${key}`], { headers: { cookie, origin: base() } });
    ws.on('message', (data, isBinary) => {
      if (isBinary) output += (data as Buffer).toString('utf8');
      else controls.push(JSON.parse((data as Buffer).toString('utf8')) as Record<string, unknown>);
    });
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return { ws, output: () => output, controls, closed };
  }

  it('its log is downloaded from the export route; a session its node does not have and an id that names none are 404, a node out of reach 502', { timeout: WAIT_MS }, async () => {
    const { cookie, key } = await login();
    const exported = (id: string): Promise<Response> => fetch(`${base()}/api/sessions/${encodeURIComponent(id)}/export`, { headers: { cookie, 'x-switchboard-key': key } });
    const res = await exported(remoteId);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const seqs = (await res.text()).trimEnd().split('\n').map((line) => (JSON.parse(line) as { seq: number }).seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    expect((await exported('n1/p00000000')).status).toBe(404);
    expect((await exported('a/b/c')).status).toBe(404);
    const away = await exported('nobody/p00000000');
    expect(away.status).toBe(502);
    expect(await away.text()).toContain("the session's log could not be read");
  });

  it('is a terminal: the replay, typing, resize, and the program’s exit', { timeout: WAIT_MS }, async () => {
    const c = need(client);
    await c.sendText(remoteId, 'before the attach', { addNewline: true });
    await c.waitFor(remoteId, { pattern: 'said: before the attach', timeoutMs: 20_000 });
    const term = await paneSocket(remoteId);
    try {
      await until(() => term.output().includes('said: before the attach'), 'the replay of what the pane showed', WAIT_MS);
      term.ws.send(Buffer.from('typed in the browser\r'));
      await until(() => term.output().includes('said: typed in the browser'), 'the typing echoed back', WAIT_MS);
      term.ws.send(JSON.stringify({ type: 'resize', cols: 77, rows: 22 }));
      term.ws.send(JSON.stringify({ type: 'resize', cols: -1, rows: 22 }));
      await until(() => term.controls.some((m) => m.type === 'error'), 'an error for the bad size', WAIT_MS);
      term.ws.send(Buffer.from('size\r'));
      await until(() => term.output().includes('size 77x22'), 'the resize', WAIT_MS);
      term.ws.send(Buffer.from('bye\r'));
      await until(() => term.controls.some((m) => m.type === 'exit'), 'the exit', WAIT_MS);
      expect(term.controls).toContainEqual({ type: 'exit', exit_code: 3, signal: null });
      expect(await c.isAlive(remoteId)).toMatchObject({ alive: false, exit_code: 3 });
    } finally {
      term.ws.close();
    }
  });

  it('a pane its node does not have: the socket says so and closes', { timeout: WAIT_MS }, async () => {
    const term = await paneSocket('n1/p00000000');
    expect(await term.closed).toBe(4404);
    expect(term.controls).toContainEqual(expect.objectContaining({ type: 'error', code: 'PANE_NOT_FOUND' }));
  });
});
