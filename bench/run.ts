/**
 * npm run bench: Switchboard and tmux measured side by side in the same run, on the same machine.
 * tmux is driven the way CCB drives it (a `tmux` process per command, polling capture-pane).
 * Writes bench/results/latest.json: [{name, unit, ours, peer, peer_name, better}].
 */
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { spawn as spawnPty } from 'node-pty';
import type { SwitchboardClient } from '../src/index.js';
import { DaemonProcess } from './daemon-process.js';
import { DAEMON_NODE_FLAGS, daemonEnv } from '../src/daemon/index.js';
import { percentile, privateMiB, procCpuMs, rssMiB, sample, sleep } from './stats.js';
import { TmuxServer, tmuxVersion } from './tmux.js';
import { measureAgentStarts, median } from './agent-start.js';
import { measureAgentStates } from './agent-states.js';
import { measureEvents } from './events.js';
import { measureDashboard } from './dashboard.js';
import { measureTmuxFrontEnd } from './tmux-front.js';
import { measureAutoApproveAtSizes, measureReliability } from './reliability.js';
import { measureAsks } from './ask.js';
import { measureBridge } from './bridge.js';
import { measureFirstTokens, printFirstTokenTable } from './first-token.js';
import { measureTeam } from './team.js';
import { busyLoops } from './busy.js';
import { measureCluster } from './cluster.js';

interface Figure {
  name: string;
  unit: string;
  ours: number;
  peer: number | null;
  peer_name: string | null;
  better: 'lower' | 'higher';
}

const here = path.dirname(fileURLToPath(import.meta.url));
const results: Figure[] = [];
const PEER = 'tmux';
/** The state bench's peer: ccmanager's detection rule, run on the same pane (bench/agent-states.ts). */
const STATE_PEER = 'ccmanager rule';
/** The team bench's reference: the same CLIs opened with create_pane, each after the one before is ready (bench/team.ts). */
const SERIAL_OPEN = 'opened one after another';
/** The bridge first-token bench's reference: the same CLI started directly in the same mode (bench/direct-cli.ts). */
const CLI_DIRECT = 'CLI started directly';
const SHELL_ENV = { PS1: 'PROMPT$ ', HISTFILE: '/dev/null' };
const BASH_PROGRAM = 'bash';
const BASH_ARGS = ['--norc', '--noprofile'];
const BASH = [BASH_PROGRAM, ...BASH_ARGS];
const TMUX_BASH = "env PS1='PROMPT$ ' HISTFILE=/dev/null bash --norc --noprofile";

function record(figure: string, unit: string, ours: number, peer: number | null, better: 'lower' | 'higher', peerName: string | null = PEER): void {
  // Figures taken beside busy loops are figures of their own (latest.json keeps both).
  const name = BUSY > 0 ? `${figure} [${BUSY} busy loops]` : figure;
  const round = (v: number): number => Number(v.toFixed(v < 1 ? 4 : 2));
  results.push({ name, unit, ours: round(ours), peer: peer === null ? null : round(peer), peer_name: peer === null ? null : peerName, better });
  const ratio = peer === null || peer <= 0 || ours <= 0 ? '' : better === 'lower' ? `${(peer / ours).toFixed(1)}x` : `${(ours / peer).toFixed(2)}x`;
  console.log(`${name.padEnd(58)} ${round(ours).toString().padStart(10)} ${(peer === null ? '-' : round(peer).toString()).padStart(10)} ${unit.padEnd(6)} ${ratio}`);
}

function ensureTmux(): string {
  const existing = tmuxVersion();
  if (existing) return existing;
  console.log('tmux is missing: installing it with apt');
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const run = (args: string[]): void => {
    const [cmd, ...rest] = [...sudo, ...args] as [string, ...string[]];
    execFileSync(cmd, rest, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  };
  run(['apt-get', 'update']);
  run(['apt-get', 'install', '-y', 'tmux']);
  const installed = tmuxVersion();
  if (!installed) throw new Error('tmux could not be installed');
  return installed;
}

async function newShell(client: SwitchboardClient, title = 'bench'): Promise<string> {
  const { pane_id } = await client.createPane({ argv: BASH, env: SHELL_ENV, cwd: here, title });
  const ready = await client.waitFor(pane_id, { pattern: 'PROMPT\\$', timeoutMs: 15_000 });
  if (!ready.matched) throw new Error('shell did not start');
  return pane_id;
}

async function tmuxWaitFor(tmux: TmuxServer, pane: string, line: string, history = 0, pollMs = 0): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`tmux: '${line}' never showed in ${pane}`);
    const out = await tmux.run(['capture-pane', '-p', '-t', pane, ...(history ? ['-S', String(-history)] : [])]);
    if (out.split('\n').some((l) => l.trimEnd() === line)) return;
    if (pollMs) await sleep(pollMs);
  }
}

async function rpcRoundTrip(daemon: DaemonProcess, tmux: TmuxServer): Promise<void> {
  console.log('\n# RPC round trip');
  const tmuxPane = await tmux.newPane(TMUX_BASH);
  const tmuxList = await sample(300, 30, async () => {
    await tmux.run(['list-panes', '-a']);
  });
  const tmuxAlive = await sample(300, 30, async () => {
    await tmux.run(['display', '-p', '-t', tmuxPane, '#{pane_dead}']);
  });
  for (const [label, preferTcp] of [['unix socket', false], ['tcp', true]] as const) {
    const client = await daemon.connect(preferTcp);
    const pane = await newShell(client);
    const list = await sample(3000, 1000, async () => {
      await client.list();
    });
    const alive = await sample(3000, 1000, async () => {
      await client.isAlive(pane);
    });
    record(`rpc list p50 (${label})`, 'ms', percentile(list, 50), percentile(tmuxList, 50), 'lower');
    record(`rpc list p99 (${label})`, 'ms', percentile(list, 99), percentile(tmuxList, 99), 'lower');
    record(`rpc is_alive p50 (${label})`, 'ms', percentile(alive, 50), percentile(tmuxAlive, 50), 'lower');
    record(`rpc is_alive p99 (${label})`, 'ms', percentile(alive, 99), percentile(tmuxAlive, 99), 'lower');
    await client.remove(pane);
    client.close();
  }
}

async function injection(daemon: DaemonProcess, tmux: TmuxServer): Promise<void> {
  console.log('\n# Injection: send a marker line to a shell, until its output is on the rendered screen');
  const client = await daemon.connect();
  const pane = await newShell(client);
  let n = 0;
  const ours = await sample(1000, 100, async () => {
    const marker = `M${n++}x`;
    // Ask to be told first, then type: requests on one connection start in order.
    const seen = client.waitFor(pane, { pattern: `^${marker}$`, flags: 'm', timeoutMs: 10_000 });
    await client.sendText(pane, `echo ${marker}`, { addNewline: true });
    if (!(await seen).matched) throw new Error('marker not seen');
  });
  await client.remove(pane);
  client.close();

  // The floor: node-pty in this process, writing to a shell and reading its echo, no RPC, no rendering.
  const pty = spawnPty(BASH_PROGRAM, BASH_ARGS, { cols: 120, rows: 30, env: { ...process.env, ...SHELL_ENV } });
  let buffered = '';
  let wake: (() => void) | undefined;
  pty.onData((d) => {
    buffered += d;
    if (buffered.length > 100_000) buffered = buffered.slice(-10_000);
    wake?.();
  });
  await sleep(500);
  let m = 0;
  const floor = await sample(1000, 100, async () => {
    const marker = `F${m++}x`;
    // The output line, not the echo of the typed command ("echo F1x"): it starts after a CR or LF.
    const needle = new RegExp(`[\\r\\n]${marker}\\r\\n`);
    pty.write(`echo ${marker}\r`);
    const deadline = Date.now() + 10_000;
    while (!needle.test(buffered)) {
      if (Date.now() > deadline) throw new Error(`floor: ${marker} not seen`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 100);
      });
    }
    wake = undefined;
  });
  pty.kill('SIGKILL');

  const tmuxPane = await tmux.newPane(TMUX_BASH);
  await tmuxWaitFor(tmux, tmuxPane, 'PROMPT$', 0, 20);
  let t = 0;
  const peer = await sample(100, 10, async () => {
    const marker = `T${t++}x`;
    await tmux.run(['send-keys', '-t', tmuxPane, `echo ${marker}`, 'Enter']);
    await tmuxWaitFor(tmux, tmuxPane, marker);
  });
  record('injection p50', 'ms', percentile(ours, 50), percentile(peer, 50), 'lower');
  record('injection p99', 'ms', percentile(ours, 99), percentile(peer, 99), 'lower');
  record('injection p50, node-pty floor (in-process, no RPC, no rendering)', 'ms', percentile(floor, 50), null, 'lower');
  record('injection p99, node-pty floor (in-process, no RPC, no rendering)', 'ms', percentile(floor, 99), null, 'lower');
}

async function getText(daemon: DaemonProcess, tmux: TmuxServer): Promise<void> {
  console.log('\n# get_text of 1,000 lines');
  const client = await daemon.connect();
  const pane = await newShell(client);
  await client.sendText(pane, "seq -f 'history line %g with some words in it' 1 3000", { addNewline: true });
  await client.waitFor(pane, { pattern: 'line 3000 with', timeoutMs: 30_000 });
  const ours = await sample(1000, 100, async () => {
    const { text } = await client.getText(pane, { lines: 1000 });
    if (text.length < 10_000) throw new Error('short read');
  });
  await client.remove(pane);
  client.close();
  const tmuxPane = await tmux.newPane(TMUX_BASH);
  await tmuxWaitFor(tmux, tmuxPane, 'PROMPT$', 0, 20);
  await tmux.run(['send-keys', '-t', tmuxPane, "seq -f 'history line %g with some words in it' 1 3000", 'Enter']);
  await tmuxWaitFor(tmux, tmuxPane, 'history line 3000 with some words in it', 0, 20);
  const peer = await sample(300, 30, async () => {
    await tmux.run(['capture-pane', '-p', '-S', '-1000', '-t', tmuxPane]);
  });
  record('get_text 1,000 lines p50', 'ms', percentile(ours, 50), percentile(peer, 50), 'lower');
  record('get_text 1,000 lines p99', 'ms', percentile(ours, 99), percentile(peer, 99), 'lower');
}

async function writeBigFile(file: string, bytes: number): Promise<string> {
  const marker = `END-OF-BENCH-${Date.now()}`;
  const out = createWriteStream(file);
  let written = 0;
  let i = 0;
  const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'theta', 'lambda'];
  while (written < bytes) {
    let chunk = '';
    for (let k = 0; k < 1000; k++, i++) {
      const colour = 31 + (i % 7);
      chunk += `\x1b[${colour}m${String(i).padStart(8, '0')}\x1b[0m ${words[i % 8]} ${'lorem ipsum dolor '.repeat(1 + (i % 4))}\x1b[1m${words[(i + 3) % 8]}\x1b[0m\n`;
    }
    written += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end(`${marker}\n`);
  await once(out, 'finish');
  return marker;
}

async function throughput(daemon: DaemonProcess, tmux: TmuxServer): Promise<void> {
  console.log('\n# Throughput: cat of a 64 MB file of text and ANSI colour, until its last line is on screen');
  const dir = path.join(here, 'tmp');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'throughput.txt');
  const bytes = 64 * 1024 * 1024;
  const marker = await writeBigFile(file, bytes);
  const client = await daemon.connect();
  const oursRuns: number[] = [];
  // What the render costs: the CPU time the daemon (all its threads: the parse, the garbage
  // collector's helpers) and the tmux server spend per MB, which is what a busy machine rations.
  let oursCpuMs = 0;
  let peerCpuMs = 0;
  for (let run = 0; run < 2; run++) {
    const pane = await newShell(client);
    const cpu0 = procCpuMs(daemon.pid);
    const t0 = performance.now();
    const seen = client.waitFor(pane, { pattern: `^${marker}$`, flags: 'm', timeoutMs: 300_000 });
    await client.sendText(pane, `cat ${file}`, { addNewline: true });
    if (!(await seen).matched) throw new Error('end marker not seen');
    oursRuns.push((performance.now() - t0) / 1000);
    oursCpuMs += procCpuMs(daemon.pid) - cpu0;
    await client.remove(pane);
  }
  client.close();
  const peerRuns: number[] = [];
  for (let run = 0; run < 2; run++) {
    const tmuxPane = await tmux.newPane(TMUX_BASH);
    await tmuxWaitFor(tmux, tmuxPane, 'PROMPT$', 0, 20);
    const cpu0 = procCpuMs(tmux.serverPid());
    const t0 = performance.now();
    await tmux.run(['send-keys', '-t', tmuxPane, `cat ${file}`, 'Enter']);
    await tmuxWaitFor(tmux, tmuxPane, marker, 0, 10);
    peerRuns.push((performance.now() - t0) / 1000);
    peerCpuMs += procCpuMs(tmux.serverPid()) - cpu0;
    await tmux.run(['kill-pane', '-t', tmuxPane]);
  }
  const mb = bytes / (1024 * 1024);
  record('throughput: cat 64 MB (best of 2)', 'MB/s', mb / Math.min(...oursRuns), mb / Math.min(...peerRuns), 'higher');
  record('throughput: CPU time per MB rendered (mean of 2)', 'ms', oursCpuMs / (2 * mb), peerCpuMs / (2 * mb), 'lower');
}

async function settledRss(pid: number): Promise<number> {
  await sleep(2_000);
  return rssMiB(pid);
}

/** What Node.js alone holds, started with the daemon's flags and environment, doing nothing. */
async function bareNodeRss(): Promise<{ rss: number; private: number }> {
  const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, '-e', 'setInterval(() => {}, 1000)'], { env: daemonEnv({ ...process.env }), stdio: 'ignore' });
  try {
    const rss = await settledRss(child.pid ?? -1);
    return { rss, private: await privateMiB(child.pid ?? -1) };
  } finally {
    child.kill('SIGKILL');
  }
}

async function memory(tmuxName: string): Promise<void> {
  console.log('\n# Memory (resident set of the daemon / the tmux server)');
  const fill = "seq -f 'row %g: the quick brown fox jumps over the lazy dog, again' 1 10000";
  // Idle panes.
  const daemon = await DaemonProcess.start();
  const client = await daemon.connect();
  const base = await settledRss(daemon.pid);
  const basePrivate = await privateMiB(daemon.pid);
  for (let i = 0; i < 10; i++) await newShell(client);
  const ours10 = await settledRss(daemon.pid);
  for (let i = 0; i < 40; i++) await newShell(client);
  const ours50 = await settledRss(daemon.pid);
  client.close();
  await daemon.stop();
  // Panes holding 10,000 lines each.
  const daemon2 = await DaemonProcess.start();
  const client2 = await daemon2.connect();
  const base2 = await settledRss(daemon2.pid);
  for (let i = 0; i < 10; i++) {
    const pane = await newShell(client2);
    await client2.sendText(pane, fill, { addNewline: true });
    await client2.waitFor(pane, { pattern: 'row 10000: ', timeoutMs: 60_000 });
  }
  const ours10k = await settledRss(daemon2.pid);
  client2.close();
  await daemon2.stop();

  const tmux = new TmuxServer(`${tmuxName}-mem`);
  tmux.start();
  const tBase = await settledRss(tmux.serverPid());
  const tBasePrivate = await privateMiB(tmux.serverPid());
  for (let i = 0; i < 10; i++) await tmux.newPane(TMUX_BASH);
  const t10 = await settledRss(tmux.serverPid());
  for (let i = 0; i < 40; i++) await tmux.newPane(TMUX_BASH);
  const t50 = await settledRss(tmux.serverPid());
  tmux.killSync();
  const tmux2 = new TmuxServer(`${tmuxName}-mem2`);
  tmux2.start();
  const tBase2 = await settledRss(tmux2.serverPid());
  for (let i = 0; i < 10; i++) {
    const pane = await tmux2.newPane(TMUX_BASH);
    await tmuxWaitFor(tmux2, pane, 'PROMPT$', 0, 20);
    await tmux2.run(['send-keys', '-t', pane, fill, 'Enter']);
    await tmuxWaitFor(tmux2, pane, 'row 10000: the quick brown fox jumps over the lazy dog, again', 0, 50);
  }
  const t10k = await settledRss(tmux2.serverPid());
  tmux2.killSync();

  record('memory: daemon with no panes', 'MiB', base, tBase, 'lower');
  record('memory: daemon with no panes, private part (RssAnon)', 'MiB', basePrivate, tBasePrivate, 'lower');
  const floor = await bareNodeRss();
  record('memory: a bare Node.js process, as the daemon is started (the floor)', 'MiB', floor.rss, null, 'lower');
  record('memory: a bare Node.js process, private part (RssAnon)', 'MiB', floor.private, null, 'lower');
  record('memory: daemon with 10 idle shell panes', 'MiB', ours10, t10, 'lower');
  record('memory: daemon with 50 idle shell panes', 'MiB', ours50, t50, 'lower');
  record('memory: daemon with 10 panes x 10,000 lines of scrollback', 'MiB', ours10k, t10k, 'lower');
  record('memory: idle shell pane, per pane', 'MiB', (ours50 - ours10) / 40, (t50 - t10) / 40, 'lower');
  record('memory: pane with 10,000 lines of scrollback, per pane', 'MiB', (ours10k - base2) / 10, (t10k - tBase2) / 10, 'lower');
  await floodingMemory(tmuxName);
}

const FLOOD_SECONDS = 15;
const FLOOD = 'yes "flooding the terminal with a long line of output text, over and over again 0123456789"';

/** The highest resident set of `pid` over FLOOD_SECONDS, looking every 500 ms, and the last. */
async function rssWhileFlooding(pid: () => number): Promise<{ peak: number; end: number }> {
  let peak = 0;
  let end = 0;
  for (let t = 0; t < FLOOD_SECONDS * 2; t++) {
    await sleep(500);
    end = await rssMiB(pid());
    peak = Math.max(peak, end);
  }
  return { peak, end };
}

/** Memory with panes that never stop printing: what the output budget is for (issue 11). */
async function floodingMemory(tmuxName: string): Promise<void> {
  for (const count of [10, 50]) {
    const daemon = await DaemonProcess.start();
    const client = await daemon.connect();
    for (let i = 0; i < count; i++) await client.createPane({ argv: ['bash', '-c', FLOOD], cwd: here });
    const ours = await rssWhileFlooding(() => daemon.pid);
    client.close();
    await daemon.stop();
    const tmux = new TmuxServer(`${tmuxName}-flood${count}`);
    tmux.start();
    for (let i = 0; i < count; i++) await tmux.newPane(FLOOD);
    const peer = await rssWhileFlooding(() => tmux.serverPid());
    tmux.killSync();
    record(`memory: daemon with ${count} panes flooding, peak over ${FLOOD_SECONDS} s`, 'MiB', ours.peak, peer.peak, 'lower');
    record(`memory: daemon with ${count} panes flooding, after ${FLOOD_SECONDS} s`, 'MiB', ours.end, peer.end, 'lower');
  }
}

async function aliveUnderFlood(daemon: DaemonProcess, tmux: TmuxServer): Promise<void> {
  console.log('\n# is_alive on a quiet pane while another pane floods output');
  const client = await daemon.connect();
  const flood = await client.createPane({ argv: ['bash', '-c', 'yes "flooding the terminal with a long line of output text, over and over again"'], cwd: here });
  const quiet = await newShell(client);
  await sleep(500);
  const ours = await sample(3000, 300, async () => {
    await client.isAlive(quiet);
  });
  const info = await client.getText(flood.pane_id, { lines: 3 });
  if (!info.text.includes('flooding')) throw new Error('flood pane is not flooding');
  await client.remove(flood.pane_id);
  await client.remove(quiet);
  client.close();
  const floodPane = await tmux.newPane('yes "flooding the terminal with a long line of output text, over and over again"');
  const quietPane = await tmux.newPane(TMUX_BASH);
  await sleep(500);
  const peer = await sample(300, 30, async () => {
    await tmux.run(['display', '-p', '-t', quietPane, '#{pane_dead}']);
  });
  await tmux.run(['kill-pane', '-t', floodPane]);
  record('is_alive p50 while another pane floods', 'ms', percentile(ours, 50), percentile(peer, 50), 'lower');
  record('is_alive p99 while another pane floods', 'ms', percentile(ours, 99), percentile(peer, 99), 'lower');
}

async function agentStarts(name: string): Promise<void> {
  console.log('\n# Agent start: pane creation to a settled idle prompt, first-run dialogs answered (median of 5)');
  const agentClis = path.join(here, '..', 'test', 'agent-clis');
  // The pinned CLIs the test line installs (scripts/install-agent-clis.ts); OpenCode's plugin package with them.
  const binaryDirs = [path.join(agentClis, 'node_modules', '.bin')];
  process.env.SWITCHBOARD_OPENCODE_PLUGIN_DIR = path.join(agentClis, 'opencode-plugin');
  const daemon = await DaemonProcess.start({ SWITCHBOARD_AGENT_PATH: binaryDirs.join(path.delimiter), SWITCHBOARD_OPENCODE_PLUGIN_DIR: process.env.SWITCHBOARD_OPENCODE_PLUGIN_DIR });
  const tmux = new TmuxServer(`${name}-agents`);
  tmux.start(120, 40);
  try {
    for (const figure of await measureAgentStarts(daemon, tmux, binaryDirs)) {
      record(`agent start to idle prompt: ${figure.agent} ${figure.version ?? ''}`.trimEnd(), 'ms', median(figure.ours), median(figure.peer), 'lower');
    }
  } finally {
    await daemon.stop();
    tmux.killSync();
  }
}

async function agentStates(): Promise<void> {
  const turns = Number(process.env.SWITCHBOARD_BENCH_TURNS ?? 50);
  console.log(`\n# Agent states over ${turns} turns per CLI: ours (event-driven tracker, CodingAgent.execute) vs ccmanager's rule (look every 100 ms, idle after 1.5 s unchanged), same pane`);
  const agentClis = path.join(here, '..', 'test', 'agent-clis');
  const binaryDirs = [path.join(agentClis, 'node_modules', '.bin')];
  process.env.SWITCHBOARD_OPENCODE_PLUGIN_DIR = path.join(agentClis, 'opencode-plugin');
  const only = (process.env.SWITCHBOARD_BENCH_AGENTS ?? '').split(',').filter(Boolean);
  for (const f of await measureAgentStates(binaryDirs, turns, only)) {
    const label = `${f.agent} ${f.version ?? ''}`.trimEnd();
    // A figure with no samples is left out rather than written as NaN; the problems below say why.
    const both = (name: string, ours: number[], peer: number[], q: number): void => {
      if (ours.length === 0) return;
      record(name, 'ms', percentile(ours, q), peer.length > 0 ? percentile(peer, q) : null, 'lower', STATE_PEER);
    };
    both(`approval drawn to waiting_approval p50: ${label}`, f.approvalLatency.ours, f.approvalLatency.peer, 50);
    both(`approval drawn to waiting_approval p99: ${label}`, f.approvalLatency.ours, f.approvalLatency.peer, 99);
    both(`reply finished to idle p50: ${label}`, f.idleLatency.ours, f.idleLatency.peer, 50);
    both(`reply finished to idle p99: ${label}`, f.idleLatency.ours, f.idleLatency.peer, 99);
    record(`approval prompts never seen, of ${f.turns}: ${label}`, 'turns', f.ourMissedApprovals, f.peerMissedApprovals, 'lower', STATE_PEER);
    record(`false completions in ${f.turns} turns: ${label}`, 'turns', f.falseCompletions.ours, f.falseCompletions.peer, 'lower', STATE_PEER);
    record(`turns completed of ${f.turns}: ${label}`, 'turns', f.completed, null, 'higher');
    record(`mid-turn idle events (not acted on) in ${f.turns} turns: ${label}`, 'turns', f.falseIdleEvents, null, 'lower');
    for (const problem of f.problems) console.log(`  ${f.agent}: ${problem}`);
  }
}

async function events(): Promise<void> {
  console.log('\n# Structured output: normalizers and the MsgStore, one core, this process (no peer runs these formats)');
  for (const f of await measureEvents()) record(f.name, f.unit, f.value, null, f.unit === 'MiB' ? 'lower' : 'higher');
}

/** Sections by name; `npm run bench -- agents` runs only those named and merges them into latest.json. */
const SECTIONS: Record<string, (name: string) => Promise<void>> = {
  panes: async (name) => {
    const tmux = new TmuxServer(name);
    tmux.start();
    const daemon = await DaemonProcess.start();
    try {
      await rpcRoundTrip(daemon, tmux);
      await injection(daemon, tmux);
      await getText(daemon, tmux);
      await aliveUnderFlood(daemon, tmux);
      await throughput(daemon, tmux);
    } finally {
      await daemon.stop();
      tmux.killSync();
    }
  },
  memory,
  agents: agentStarts,
  states: agentStates,
  events,
  dashboard: async () => {
    // No peer runs a terminal in a browser through a daemon here: these figures stand alone.
    for (const f of await measureDashboard()) record(f.name, f.unit, f.value, null, f.better);
  },
  reliability: async () => {
    console.log('\n# execute() with each real CLI while both cores are busy (two busy loops); no peer drives these CLIs to completion');
    for (const f of await measureReliability()) record(f.name, f.unit, f.value, null, f.better);
    for (const f of await measureAutoApproveAtSizes()) record(f.name, f.unit, f.value, null, f.better);
  },
  ask: async () => {
    console.log('\n# Asks (seed 000): what Switchboard adds to an ask beyond the target CLI\'s own turn, real Codex and Claude Code against the scripted model; no peer reads these transcripts');
    const { figures, raw } = await measureAsks(Number(process.env.SWITCHBOARD_BENCH_ASKS ?? 20));
    for (const f of figures) record(f.name, f.unit, f.value, null, f.better);
    console.log(JSON.stringify(raw));
  },
  bridge: async () => {
    console.log('\n# The agent bridge: the run ledger on one core, queued runs, SSE fan-out, POST run to first event with the fake backend (no peer runs this bridge)');
    for (const f of await measureBridge()) record(f.name, f.unit, f.value, null, f.better);
    const runs = Number(process.env.SWITCHBOARD_BENCH_BRIDGE_RUNS ?? 5);
    if (!Number.isInteger(runs) || runs < 1) throw new Error(`SWITCHBOARD_BENCH_BRIDGE_RUNS must be a whole number of at least 1, not ${process.env.SWITCHBOARD_BENCH_BRIDGE_RUNS}`);
    console.log(`\n# The bridge's first token: each real CLI through a daemon (POST run + SSE, chat proxy stream) beside the same CLI started directly in its structured mode; the scripted model streams its reply in pieces (${runs} runs per CLI after a warm-up)`);
    const only = (process.env.SWITCHBOARD_BENCH_AGENTS ?? '').split(',').filter(Boolean);
    const { report, figures } = await measureFirstTokens({ runs, only });
    for (const f of figures) record(f.name, f.unit, f.value, f.peer, f.better, CLI_DIRECT);
    printFirstTokenTable(report);
    mkdirSync(path.join(here, 'results'), { recursive: true });
    writeFileSync(path.join(here, 'results', 'bridge-first-token.json'), `${JSON.stringify(report, null, 2)}\n`);
  },
  team: async () => {
    console.log('\n# Team runs (seed 003): goal to every worker ready for a mixed team (median of 3) beside the same CLIs opened one after another; a worker\'s completion to its delivery into an idle planner (30 rounds, no peer)');
    const agentClis = path.join(here, '..', 'test', 'agent-clis');
    process.env.SWITCHBOARD_OPENCODE_PLUGIN_DIR = path.join(agentClis, 'opencode-plugin');
    for (const f of await measureTeam([path.join(agentClis, 'node_modules', '.bin')])) record(f.name, f.unit, f.value, f.peer, f.better, SERIAL_OPEN);
  },
  cluster: async () => {
    console.log('\n# Runs across machines (issue 26): a controller in this process, nodes as processes of their own, real nats-server; no peer is named, so these figures stand alone');
    for (const f of await measureCluster()) record(f.name, f.unit, f.value, null, f.better);
  },
  tmux: async () => {
    console.log('\n# tmux front end: a `tmux` process per command, as CCB runs it (real tmux vs the installed launchers and the daemon)');
    for (const f of await measureTmuxFrontEnd()) record(f.name, f.unit, f.ours, f.peer, 'lower');
  },
};

/** Busy loops running beside every section (SWITCHBOARD_BENCH_BUSY), for a machine whose cores are shared. */
const BUSY = Number(process.env.SWITCHBOARD_BENCH_BUSY ?? 0);

async function main(): Promise<void> {
  const chosen = process.argv.slice(2);
  if (!Number.isInteger(BUSY) || BUSY < 0) throw new Error(`SWITCHBOARD_BENCH_BUSY must be a whole number, not ${process.env.SWITCHBOARD_BENCH_BUSY}`);
  const unknown = chosen.filter((s) => !(s in SECTIONS));
  if (unknown.length > 0) throw new Error(`unknown bench section ${unknown.join(', ')}; known: ${Object.keys(SECTIONS).join(', ')}`);
  const sections = chosen.length > 0 ? chosen : Object.keys(SECTIONS);
  const version = ensureTmux();
  const name = `sbbench-${process.pid}`;
  console.log(`Switchboard vs ${version}; node ${process.version}; ${cpus().length} cores; ${(totalmem() / 2 ** 30).toFixed(0)} GiB`);
  console.log(`${'figure'.padEnd(58)} ${'ours'.padStart(10)} ${'tmux'.padStart(10)} unit   ratio`);
  if (BUSY > 0) console.log(`(with ${BUSY} busy loops beside every figure, ours and tmux's alike)`);
  const stopBusy = busyLoops(BUSY);
  try {
    for (const section of sections) await SECTIONS[section]?.(name);
  } finally {
    stopBusy();
  }
  const outDir = path.join(here, 'results');
  mkdirSync(outDir, { recursive: true });
  const latest = path.join(outDir, 'latest.json');
  // A partial run replaces its own figures and keeps the rest of the last full run.
  const kept = chosen.length > 0 && existsSync(latest) ? (JSON.parse(readFileSync(latest, 'utf8')) as Figure[]).filter((f) => !results.some((r) => r.name === f.name)) : [];
  writeFileSync(latest, `${JSON.stringify([...kept, ...results], null, 2)}\n`);
  writeFileSync(
    path.join(outDir, 'latest-environment.json'),
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, peer: version, cpus: cpus().length, cpu: cpus()[0]?.model, memory_gib: Math.round(totalmem() / 2 ** 30) }, null, 2)}\n`,
  );
  console.log(`\nwrote ${path.join(outDir, 'latest.json')}`);
}

await main();
