/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core), through the daemon:
 * keystroke-to-echo latency on a pane's WebSocket (bytes sent from the page, until the shell's echo
 * is back in the page), first with the dashboard idle and then while another pane streams 10 MB/s
 * to the same page (which renders both panes in xterm.js), and the rate that stream reaches the
 * page at. The dashboard page itself is open the whole time, so its rendering load is real.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import NodeWebSocket from 'ws';
import { readRuntimeFile } from '../src/daemon/index.js';
import { DaemonProcess } from './daemon-process.js';
import { percentile } from './stats.js';

export interface DashboardFigure {
  name: string;
  unit: string;
  value: number;
  better: 'lower' | 'higher';
}

const here = path.dirname(fileURLToPath(import.meta.url));
const CHROMIUM = process.env.SWITCHBOARD_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SAMPLES = 200;
const STREAM_BYTES_PER_SEC = 10 * 1024 * 1024;
const STREAM_SECONDS = 8;

/** A program that writes `rate` bytes a second of printable lines, for `seconds`. */
function streamer(rate: number, seconds: number): string[] {
  const script = `const line='x'.repeat(99)+'\\n';const chunk=line.repeat(655);const per=${rate}/chunk.length/100;let sent=0;const t0=Date.now();const tick=()=>{const due=Math.floor((Date.now()-t0)/10*per);while(sent<due){process.stdout.write(chunk);sent++;}if(Date.now()-t0<${seconds * 1000})setTimeout(tick,10);else process.exit(0);};tick();`;
  return [process.execPath, '-e', script];
}

/** In the page: keystroke-to-echo samples over the pane's socket (ms). */
async function echoSamples(page: Page, paneId: string, samples: number): Promise<number[]> {
  return page.evaluate(
    async ({ paneId, samples }) => {
      // The page's globals (this file is compiled without the DOM library; and no named function in
      // here: tsx would wrap it in a helper the page does not have). The dashboard keeps its key in localStorage.
      const g = globalThis as unknown as { location: { host: string }; localStorage: { getItem: (k: string) => string | null } };
      const ws = new WebSocket(`ws://${g.location.host}/ws/pane/${paneId}`, ['switchboard', `sb-key.${g.localStorage.getItem('switchboard.key') ?? ''}`]);
      ws.binaryType = 'arraybuffer';
      let received = '';
      // The echo is timed when its frame is handled, not by polling (a timer loop in a page is
      // clamped to 4 ms steps, which would be most of what is measured).
      let waiting: { ch: string; t0: number; done: (ms: number) => void } | undefined;
      const decoder = new TextDecoder();
      ws.onmessage = (e) => {
        if (!(e.data instanceof ArrayBuffer)) return;
        received += decoder.decode(e.data, { stream: true });
        if (waiting && received.includes(waiting.ch)) {
          const w = waiting;
          waiting = undefined;
          w.done(performance.now() - w.t0);
        }
      };
      await new Promise((resolve) => (ws.onopen = resolve));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const out: number[] = [];
      const letters = 'abcdefghijklmnopqrstuvwxyz';
      for (let i = 0; i < samples; i++) {
        const ch = letters[i % letters.length] ?? 'a';
        received = '';
        const echoed = new Promise<number>((resolve) => (waiting = { ch, t0: performance.now(), done: resolve }));
        ws.send(new TextEncoder().encode(ch));
        out.push(await echoed);
        // Clear the line now and then so the prompt does not wrap.
        if (i % 20 === 19) {
          ws.send(new TextEncoder().encode('\u0015'));
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
      ws.close();
      return out;
    },
    { paneId, samples },
  );
}

/** In the page: bytes a second the streaming pane's socket delivers, over `seconds`. */
async function streamRate(page: Page, paneId: string, seconds: number): Promise<number> {
  return page.evaluate(
    async ({ paneId, seconds }) => {
      const g = globalThis as unknown as { location: { host: string }; localStorage: { getItem: (k: string) => string | null } };
      const ws = new WebSocket(`ws://${g.location.host}/ws/pane/${paneId}`, ['switchboard', `sb-key.${g.localStorage.getItem('switchboard.key') ?? ''}`]);
      ws.binaryType = 'arraybuffer';
      let bytes = 0;
      let first = 0;
      let last = 0;
      ws.onmessage = (e) => {
        if (!(e.data instanceof ArrayBuffer)) return;
        const now = performance.now();
        if (first === 0) first = now;
        last = now;
        bytes += e.data.byteLength;
      };
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      ws.close();
      return last > first ? bytes / ((last - first) / 1000) : 0;
    },
    { paneId, seconds },
  );
}

/**
 * The same two figures from a WebSocket client in this process (no browser, no rendering): what
 * the daemon itself delivers. Authenticated as scripts are, with the daemon's token.
 */
async function outsideTheBrowser(daemon: DaemonProcess, dashboardPort: number, shellId: string, floodId: string, seconds: number): Promise<{ echo: number[]; rate: number }> {
  const token = readRuntimeFile(daemon.home)?.token ?? '';
  const open = (paneId: string, onData: (data: Buffer) => void): Promise<NodeWebSocket> =>
    new Promise((resolve, reject) => {
      const origin = `http://127.0.0.1:${dashboardPort}`;
      const ws = new NodeWebSocket(`ws://127.0.0.1:${dashboardPort}/ws/pane/${paneId}`, { headers: { origin, authorization: `Bearer ${token}` } });
      ws.on('message', (data, isBinary) => {
        if (isBinary) onData(data as Buffer);
      });
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    });
  let flooded = 0;
  let first = 0;
  let last = 0;
  const flood = await open(floodId, (data) => {
    const now = performance.now();
    if (first === 0) first = now;
    last = now;
    flooded += data.length;
  });
  let received = '';
  const shell = await open(shellId, (data) => (received += data.toString('utf8')));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const echo: number[] = [];
  const started = performance.now();
  for (let i = 0; performance.now() - started < seconds * 1000 && i < SAMPLES; i++) {
    const ch = String.fromCharCode(97 + (i % 26));
    received = '';
    const t0 = performance.now();
    shell.send(Buffer.from(ch));
    while (!received.includes(ch)) await new Promise((resolve) => setImmediate(resolve));
    echo.push(performance.now() - t0);
    if (i % 20 === 19) shell.send(Buffer.from('\u0015'));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, seconds * 1000 - (performance.now() - started))));
  flood.close();
  shell.close();
  return { echo: echo.sort((a, b) => a - b), rate: last > first ? flooded / ((last - first) / 1000) : 0 };
}

export async function measureDashboard(): Promise<DashboardFigure[]> {
  const daemon = await DaemonProcess.start();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const client = await daemon.connect();
  try {
    if (!daemon.loginUrl) throw new Error('the daemon printed no dashboard login link');
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    await page.goto(daemon.loginUrl);
    const shell = await client.createPane({ argv: ['bash', '--norc', '--noprofile'], env: { PS1: 'PROMPT$ ', HISTFILE: '/dev/null' }, cwd: here, title: 'echo' });
    await client.waitFor(shell.pane_id, { pattern: 'PROMPT\\$' });
    // Let the dashboard open its terminal for the new pane.
    await page.waitForTimeout(1_500);
    const idle = (await echoSamples(page, shell.pane_id, SAMPLES)).sort((a, b) => a - b);

    const flood = await client.createPane({ argv: streamer(STREAM_BYTES_PER_SEC, STREAM_SECONDS * 3), cwd: here, title: 'flood' });
    await page.waitForTimeout(1_000);
    // Echo while the dashboard shows the flood (its terminal paced by flow control); then, apart,
    // how fast the flood reaches the page on a socket of its own that takes everything.
    const loaded = (await echoSamples(page, shell.pane_id, SAMPLES)).sort((a, b) => a - b);
    const rate = await streamRate(page, flood.pane_id, STREAM_SECONDS / 2);
    await client.remove(flood.pane_id).catch(() => undefined);
    // The same with no browser: a fresh flood, read by a client in this process.
    await page.close();
    const flood2 = await client.createPane({ argv: streamer(STREAM_BYTES_PER_SEC, STREAM_SECONDS + 4), cwd: here, title: 'flood' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const port = Number(new URL(daemon.loginUrl).port);
    const direct = await outsideTheBrowser(daemon, port, shell.pane_id, flood2.pane_id, STREAM_SECONDS);
    await client.remove(flood2.pane_id).catch(() => undefined);
    await client.remove(shell.pane_id).catch(() => undefined);
    return [
      { name: 'dashboard socket, no browser: echo while another pane streams 10 MB/s, p50', unit: 'ms', value: percentile(direct.echo, 50), better: 'lower' },
      { name: 'dashboard socket, no browser: echo while another pane streams 10 MB/s, p99', unit: 'ms', value: percentile(direct.echo, 99), better: 'lower' },
      { name: 'dashboard socket, no browser: streaming pane delivered', unit: 'MB/s', value: direct.rate / (1024 * 1024), better: 'higher' },
      { name: 'dashboard: keystroke to echo in the browser, p50', unit: 'ms', value: percentile(idle, 50), better: 'lower' },
      { name: 'dashboard: keystroke to echo in the browser, p99', unit: 'ms', value: percentile(idle, 99), better: 'lower' },
      { name: 'dashboard: echo while another pane streams 10 MB/s, p50', unit: 'ms', value: percentile(loaded, 50), better: 'lower' },
      { name: 'dashboard: echo while another pane streams 10 MB/s, p99', unit: 'ms', value: percentile(loaded, 99), better: 'lower' },
      { name: 'dashboard: streaming pane delivered to the browser', unit: 'MB/s', value: rate / (1024 * 1024), better: 'higher' },
    ];
  } finally {
    client.close();
    await browser.close();
    await daemon.stop();
  }
}
