/**
 * `npm run bench -- cluster`: runs across machines (issue 26) against real servers on this machine:
 * Debian's nats-server with JetStream, and the controller's ledger in SQLite (default) or
 * PostgreSQL (SWITCHBOARD_BENCH_LEDGER=postgres, or SWITCHBOARD_TEST_LEDGER as the tests choose).
 *
 * The controller is this process, composed as the daemon's bridge composes it (a RunService whose
 * RemoteRuns is ClusterRuns, its events taken into the RunLedger), and nothing else runs here: the
 * nodes and nats-server are processes of their own, so this process's CPU (process.cpuUsage) and
 * resident set are the controller's.
 *
 * 1. submit → running: a `switchboard node` process (the built CLI, shell backend); one run of
 *    `true` at a time, from the submit call to the node's `running` event (its timestamp, same
 *    clock) and to that event reaching the controller.
 * 2. events per second: the same node, runs that print many lines (one `echo` a line), from the
 *    first event the controller takes to the last run's end.
 * 3. many nodes × many agents: 20 nodes (bench/cluster-nodes.ts: the node's real composition with a
 *    scripted stand-in agent) and 50 → 400 agents (runs) spread evenly over them by label, each
 *    writing one entry (one event) every 250 ms; at each count the controller's CPU per event and
 *    its memory over a quiet window.
 *
 * Writes the figures to latest.json (through run.ts) and the whole report to bench/results/cluster.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { ClusterRuns } from '../src/cluster-runs/index.js';
import { connectCluster, parseNatsOptions, type ClusterConnection } from '../src/cluster/index.js';
import { silentLogger } from '../src/core/logger.js';
import { parseGovernancePolicy } from '../src/governance/index.js';
import { parseLedgerLocation, PostgresLedgerStore, RunLedger, SqliteLedgerStore, type LedgerStore } from '../src/ledger/index.js';
import { RunService, type RunEvent } from '../src/runs/index.js';
import { startNatsServer, type NatsTestServer } from '../test/support/nats-server.js';
import { startPostgres, type PostgresServer } from '../test/support/postgres-server.js';
import { atTestProcessEnd } from '../test/support/test-process-end.js';
import { percentile, procCpuMs, sleep } from './stats.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const CLI = path.join(root, 'dist', 'cli', 'main.js');
/** A bound on a wait for something that must happen; never a measure. */
const WAIT_MS = Number(process.env.SWITCHBOARD_BENCH_CLUSTER_WAIT_MS ?? 120_000);

const num = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${process.env[name]}`);
  return value;
};
const LATENCY_RUNS = num('SWITCHBOARD_BENCH_CLUSTER_RUNS', 50);
const SIM_NODES = num('SWITCHBOARD_BENCH_CLUSTER_NODES', 20);
const SIM_AGENTS = (process.env.SWITCHBOARD_BENCH_CLUSTER_AGENTS ?? '50,100,200,400').split(',').map(Number);
/** The stand-in agent's pause between its entries: 250 ms, 4 events a second per agent. */
const AGENT_STEP_MS = num('SWITCHBOARD_BENCH_CLUSTER_STEP_MS', 250);
const WINDOW_MS = num('SWITCHBOARD_BENCH_CLUSTER_WINDOW_MS', 8_000);
const PRINT_RUNS = 4;
const SUBMIT_BATCH = num('SWITCHBOARD_BENCH_CLUSTER_BATCH', 20);
const PRINT_LINES = 20_000;

export interface ClusterFigure {
  name: string;
  unit: string;
  value: number;
  better: 'lower' | 'higher';
}

interface SimStep {
  agents: number;
  agents_running: number;
  window_s: number;
  events: number;
  events_per_s: number;
  controller_cpu_ms: number;
  controller_cpu_us_per_event: number;
  controller_cpu_share_of_a_core: number;
  controller_rss_mib: number;
  controller_heap_mib: number;
  nodes_cpu_share: number;
  nats_cpu_share: number;
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const mib = (bytes: number): number => bytes / 2 ** 20;

/** A child process ended by its pid when this process ends without ending it. */
function watched(child: ChildProcess): ChildProcess {
  atTestProcessEnd(() => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
  });
  return child;
}

/** SIGTERM (its nodes leave the cluster), then SIGKILL by pid if it is still there after a while. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const late = await Promise.race([exited.then(() => false), sleep(30_000).then(() => true)]);
  if (late) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** Starts `child` and waits for the stdout line `ready` matches. */
async function readyLine(child: ChildProcess, ready: (line: string) => boolean, what: string): Promise<void> {
  const said: string[] = [];
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => said.push(chunk));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${said.join('')}`)), WAIT_MS);
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      said.push(line);
      if (ready(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`${what} exited at start: ${said.join('')}`));
    });
  });
}

class Controller {
  private constructor(
    readonly service: RunService,
    readonly runs: ClusterRuns,
    private readonly ledger: RunLedger,
    private readonly connection: ClusterConnection,
  ) {}

  /** `concurrency`: runs at once over the cluster (the policy's limit; its default of 4 would queue the simulation's agents). */
  static async start(url: string, store: LedgerStore, sandbox: string, concurrency: number): Promise<Controller> {
    const ledger = new RunLedger({ store });
    const connection = await connectCluster(parseNatsOptions({ url }), { name: 'bench-controller', logger: silentLogger });
    const runs = await ClusterRuns.open({ nc: connection.nc, logger: silentLogger });
    // The controller drives no agent itself: every run goes to a node.
    const { service } = await RunService.start({ ledger, policy: parseGovernancePolicy({ sandbox: { roots: [sandbox] }, limits: { concurrency } }), backends: [], remote: runs, scope: `${sandbox}#controller`, logger: silentLogger });
    await runs.takeEvents(ledger);
    return new Controller(service, runs, ledger, connection);
  }

  /** Resolves once the directory has `count` nodes offering `backend`. */
  async nodes(backend: string, count: number): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (this.runs.directory.list().filter((n) => n.record.clis.some((c) => c.name === backend)).length < count) {
      if (Date.now() > deadline) throw new Error(`only ${this.runs.directory.list().length} of ${count} nodes seen`);
      await sleep(50);
    }
  }

  /** Follows a run from its first event to its end. */
  follow(runId: string, onEvent: (event: RunEvent) => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.service.subscribe(runId, 0, onEvent, { onEnd: resolve, onError: reject }).catch(reject);
    });
  }

  async close(): Promise<void> {
    await this.service.dispose().catch(() => undefined);
    await this.runs.close().catch(() => undefined);
    await this.connection.close().catch(() => undefined);
    await this.ledger.close().catch(() => undefined);
  }
}

/** `switchboard node` as `npm run build` left it, with the shell backend and a home of its own. */
async function startShellNode(url: string, scratch: string, name: string, slots: number): Promise<ChildProcess> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build`);
  const home = path.join(scratch, `home-${name}`);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(home, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(scratch)}]\n`);
  const env = { ...process.env, SWITCHBOARD_HOME: home };
  const child = watched(spawn(process.execPath, [CLI, '--home', home, 'node', '--controller', url, '--name', name, '--slots', String(slots), '--backends', 'shell', '--log-level', 'warn'], { cwd: scratch, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  await readyLine(child, (line) => line.includes("runs the controller's runs"), `node ${name}`);
  return child;
}

async function submitToRunning(controller: Controller, work: string): Promise<{ node: number[]; controller: number[]; completed: number[] }> {
  const node: number[] = [];
  const seen: number[] = [];
  const completed: number[] = [];
  for (let i = -5; i < LATENCY_RUNS; i++) {
    const t0 = Date.now();
    const p0 = performance.now();
    let running: RunEvent | undefined;
    let seenAt = 0;
    const view = await controller.service.submit({ backend: 'shell', prompt: 'true', cwd: work });
    await controller.follow(view.id, (event) => {
      if (running === undefined && event.type === 'state' && event.data.to === 'running') {
        running = event;
        seenAt = performance.now();
      }
    });
    const end = performance.now();
    if (running === undefined) throw new Error(`run ${view.id} never ran: ${JSON.stringify(await controller.service.get(view.id))}`);
    if (i < 0) continue; // warm-up
    node.push(running.ts - t0);
    seen.push(seenAt - p0);
    completed.push(end - p0);
  }
  const sorted = (a: number[]): number[] => a.sort((x, y) => x - y);
  return { node: sorted(node), controller: sorted(seen), completed: sorted(completed) };
}

async function eventsPerSecond(controller: Controller, work: string): Promise<{ events: number; seconds: number; lines: number; cpu_ms: number }> {
  const script = `i=0; while [ $i -lt ${PRINT_LINES} ]; do echo "line $i of a run that prints many lines, as an agent's tool output does"; i=$((i+1)); done`;
  let events = 0;
  let first = 0;
  let last = 0;
  const cpu0 = cpuMs();
  const ended: Promise<void>[] = [];
  for (let r = 0; r < PRINT_RUNS; r++) {
    const view = await controller.service.submit({ backend: 'shell', prompt: script, cwd: work });
    ended.push(
      controller.follow(view.id, () => {
        const now = performance.now();
        if (events === 0) first = now;
        last = now;
        events++;
      }),
    );
  }
  await Promise.all(ended);
  const cpu = cpuMs() - cpu0;
  return { events, seconds: (last - first) / 1000, lines: PRINT_RUNS * PRINT_LINES, cpu_ms: cpu };
}

async function simulation(controller: Controller, url: string, scratch: string, nats: NatsTestServer): Promise<{ steps: SimStep[]; nodes: number; slots: number }> {
  const most = Math.max(...SIM_AGENTS);
  const slots = Math.ceil(most / SIM_NODES) + 2;
  const work = path.join(scratch, 'work');
  const host = watched(
    spawn(process.execPath, ['--import', 'tsx', path.join(here, 'cluster-nodes.ts'), JSON.stringify({ url, root: path.join(scratch, 'sim'), sandbox: scratch, nodes: SIM_NODES, slots, stepMs: AGENT_STEP_MS })], { cwd: root, env: process.env, stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  const steps: SimStep[] = [];
  try {
    await readyLine(host, (line) => line.includes('"ready":true'), 'the simulated nodes');
    await controller.nodes('fake', SIM_NODES);
    const ids: string[] = [];
    for (const agents of SIM_AGENTS) {
      // More agents, spread evenly over the nodes by their label (the name: a node's labels hold its name here).
      const adding = Array.from({ length: agents - ids.length }, (_, i) => ids.length + i);
      for (let b = 0; b < adding.length; b += SUBMIT_BATCH) {
        const views = await Promise.all(
          adding.slice(b, b + SUBMIT_BATCH).map((n) => controller.service.submit({ backend: 'fake', prompt: `chunks 1000000x80 agent ${n}`, cwd: work, labels: [`sim-${String(n % SIM_NODES).padStart(2, '0')}`] })),
        );
        ids.push(...views.map((v) => v.id));
      }
      const deadline = Date.now() + WAIT_MS;
      let running = 0;
      for (;;) {
        const views = await Promise.all(ids.map((id) => controller.service.get(id)));
        running = views.filter((v) => v.status === 'running' || v.status === 'streaming').length;
        if (running === ids.length) break;
        const others = views.filter((v) => v.status !== 'running' && v.status !== 'streaming').map((v) => `${v.id} (#${ids.indexOf(v.id)}) ${v.status} on ${v.node}: ${v.message}`);
        if (Date.now() > deadline) throw new Error(`${running} of ${ids.length} agents running after ${WAIT_MS} ms; the others: ${others.slice(0, 5).join('; ')}`);
        await sleep(250);
      }
      await sleep(2_000);
      globalThis.gc?.();
      const seq0 = (await Promise.all(ids.map((id) => controller.service.get(id)))).reduce((s, v) => s + v.last_seq, 0);
      const [c0, n0, s0, t0] = [cpuMs(), procCpuMs(host.pid as number), procCpuMs(nats.pid), performance.now()];
      await sleep(WINDOW_MS);
      const [c1, n1, s1, t1] = [cpuMs(), procCpuMs(host.pid as number), procCpuMs(nats.pid), performance.now()];
      const seq1 = (await Promise.all(ids.map((id) => controller.service.get(id)))).reduce((s, v) => s + v.last_seq, 0);
      const rss = mib(process.memoryUsage().rss);
      globalThis.gc?.();
      const heap = mib(process.memoryUsage().heapUsed);
      const ms = t1 - t0;
      const events = seq1 - seq0;
      const step: SimStep = {
        agents,
        agents_running: running,
        window_s: ms / 1000,
        events,
        events_per_s: events / (ms / 1000),
        controller_cpu_ms: c1 - c0,
        controller_cpu_us_per_event: ((c1 - c0) * 1000) / Math.max(1, events),
        controller_cpu_share_of_a_core: (c1 - c0) / ms,
        controller_rss_mib: rss,
        controller_heap_mib: heap,
        nodes_cpu_share: (n1 - n0) / ms,
        nats_cpu_share: (s1 - s0) / ms,
      };
      steps.push(step);
      console.log(
        `  ${agents} agents: ${Math.round(step.events_per_s)} events/s in, controller ${step.controller_cpu_us_per_event.toFixed(1)} µs CPU per event (${(step.controller_cpu_share_of_a_core * 100).toFixed(0)}% of a core), rss ${rss.toFixed(0)} MiB, heap ${heap.toFixed(0)} MiB; nodes ${(step.nodes_cpu_share * 100).toFixed(0)}%, nats-server ${(step.nats_cpu_share * 100).toFixed(0)}% of a core`,
      );
    }
  } finally {
    host.stdin?.end();
    await stopChild(host);
  }
  return { steps, nodes: SIM_NODES, slots };
}

function natsVersion(): string {
  try {
    return execFileSync(process.env.SWITCHBOARD_NATS_SERVER ?? '/usr/sbin/nats-server', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

export async function measureCluster(): Promise<ClusterFigure[]> {
  const kind = process.env.SWITCHBOARD_BENCH_LEDGER ?? process.env.SWITCHBOARD_TEST_LEDGER ?? 'sqlite';
  if (kind !== 'sqlite' && kind !== 'postgres') throw new Error(`SWITCHBOARD_BENCH_LEDGER must be sqlite or postgres, not ${kind}`);
  const began = performance.now();
  const scratch = mkdtempSync(path.join(tmpdir(), 'sb-bench-cluster-'));
  atTestProcessEnd(() => rmSync(scratch, { recursive: true, force: true }));
  const work = path.join(scratch, 'work');
  mkdirSync(work, { recursive: true });
  let nats: NatsTestServer | undefined;
  let postgres: PostgresServer | undefined;
  let controller: Controller | undefined;
  let shellNode: ChildProcess | undefined;
  const figures: ClusterFigure[] = [];
  const add = (name: string, unit: string, value: number, better: 'lower' | 'higher'): void => {
    figures.push({ name: `cluster: ${name}`, unit, value, better });
  };
  try {
    nats = await startNatsServer();
    let store: LedgerStore;
    if (kind === 'postgres') {
      postgres = await startPostgres();
      const location = parseLedgerLocation(await postgres.createDatabase());
      if (location.kind !== 'postgres') throw new Error('not a PostgreSQL location');
      store = await PostgresLedgerStore.open({ url: location.url, shown: location.shown });
    } else {
      store = new SqliteLedgerStore(path.join(scratch, 'ledger.db'));
    }
    controller = await Controller.start(nats.url, store, scratch, Math.max(PRINT_RUNS, ...SIM_AGENTS));
    console.log(`  ${natsVersion()}, the controller's ledger in ${kind}; ${cpus().length} cores`);

    shellNode = await startShellNode(nats.url, scratch, 'shell-node', PRINT_RUNS);
    await controller.nodes('shell', 1);
    const latency = await submitToRunning(controller, work);
    add(`submit → running on a node (shell \`true\`, node process) p50, n=${LATENCY_RUNS}`, 'ms', percentile(latency.node, 50), 'lower');
    add(`submit → running on a node (shell \`true\`, node process) p99, n=${LATENCY_RUNS}`, 'ms', percentile(latency.node, 99), 'lower');
    add(`submit → running seen in the controller's ledger p50`, 'ms', percentile(latency.controller, 50), 'lower');
    add(`submit → running seen in the controller's ledger p99`, 'ms', percentile(latency.controller, 99), 'lower');
    add(`submit → completed in the controller's ledger p50`, 'ms', percentile(latency.completed, 50), 'lower');
    for (const f of figures) console.log(`  ${f.name}: ${f.value.toFixed(2)} ${f.unit}`);

    const printed = await eventsPerSecond(controller, work);
    const rate = printed.events / printed.seconds;
    add(`events into the controller's ledger per second (${PRINT_RUNS} shell runs printing ${PRINT_LINES} lines each)`, 'events/s', rate, 'higher');
    add(`lines per second through those events`, 'lines/s', printed.lines / printed.seconds, 'higher');
    add(`controller CPU per event while they stream`, 'µs', (printed.cpu_ms * 1000) / printed.events, 'lower');
    console.log(`  ${printed.events} events (${printed.lines} lines) in ${printed.seconds.toFixed(2)} s: ${Math.round(rate)} events/s, controller ${((printed.cpu_ms * 1000) / printed.events).toFixed(1)} µs CPU per event`);
    await stopChild(shellNode);

    const sim = await simulation(controller, nats.url, scratch, nats);
    for (const s of sim.steps) {
      add(`controller CPU per run event, ${s.agents} agents on ${sim.nodes} nodes`, 'µs', s.controller_cpu_us_per_event, 'lower');
      add(`controller CPU, ${s.agents} agents on ${sim.nodes} nodes`, '% core', s.controller_cpu_share_of_a_core * 100, 'lower');
      add(`controller resident set, ${s.agents} agents on ${sim.nodes} nodes`, 'MiB', s.controller_rss_mib, 'lower');
    }
    const [low, high] = [sim.steps[0], sim.steps.at(-1)];
    if (low && high && high.agents > low.agents) {
      add(`controller memory growth per agent (${low.agents} → ${high.agents} agents, resident set)`, 'KiB', ((high.controller_rss_mib - low.controller_rss_mib) * 1024) / (high.agents - low.agents), 'lower');
      add(`controller CPU per run event, ${high.agents} agents ÷ ${low.agents} agents (1: flat, linear total)`, 'ratio', high.controller_cpu_us_per_event / low.controller_cpu_us_per_event, 'lower');
    }
    const report = {
      date: new Date().toISOString(),
      node: process.version,
      nats_server: natsVersion(),
      ledger: kind,
      cpus: cpus().length,
      cpu: cpus()[0]?.model,
      submit_to_running: { runs: LATENCY_RUNS, warmup: 5, node_ms: summary(latency.node), controller_ms: summary(latency.controller), completed_ms: summary(latency.completed) },
      events_per_second: { runs: PRINT_RUNS, lines_per_run: PRINT_LINES, ...printed, events_per_s: rate },
      wall_s: (performance.now() - began) / 1000,
      simulation: { nodes: sim.nodes, slots_per_node: sim.slots, agent_step_ms: AGENT_STEP_MS, window_ms: WINDOW_MS, steps: sim.steps },
    };
    mkdirSync(path.join(here, 'results'), { recursive: true });
    writeFileSync(path.join(here, 'results', 'cluster.json'), `${JSON.stringify(report, null, 2)}\n`);
    return figures;
  } finally {
    if (shellNode) await stopChild(shellNode);
    await controller?.close();
    await nats?.stop();
    await postgres?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

function summary(sorted: number[]): { p50: number; p90: number; p99: number; min: number; max: number } {
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), min: sorted[0] ?? Number.NaN, max: sorted.at(-1) ?? Number.NaN };
}
