/**
 * `switchboard node` as a process of its own for the cluster tests (issue 26): the CLI run through
 * tsx from the sources, with the plain shell backend (or the agent CLIs named, against a model
 * given as `daemon --agent-home --model-url` takes it), its own home in the test's
 * scratch folder and a policy there whose sandbox is that folder. It is started `detached`, so it
 * leads a process group of its own and the group can be killed (the node and whatever its shell
 * started). Resolves once the node says it runs the controller's runs.
 *
 * Nothing is left behind: stop() ends it by its PID (SIGTERM: it leaves the cluster), then its
 * group by SIGKILL if it is still there after a bound, and kills the group in any case; a test
 * process that ends without stop() still kills the group (test-process-end.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { cleanEnv } from './cli.js';
import { atTestProcessEnd } from './test-process-end.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** A bound on a wait for something that must happen; never a measure of how fast it did. */
const WAIT_MS = 60_000;
/** What the node says on stdout once it pulls the controller's runs. */
const READY_LINE = "runs the controller's runs";

export interface SwitchboardNodeOptions {
  /** The controller's NATS URL. */
  url: string;
  /** The test's scratch folder: the node's home goes in it, and it is the node's sandbox. */
  scratch: string;
  name: string;
  labels?: readonly string[];
  /** Its repositories, by name: `--repo NAME=PATH`. */
  repos?: Record<string, string>;
  /** Runs at once; 2 unless given. */
  slots?: number;
  /** The backends it offers; `shell` unless given. */
  backends?: readonly string[];
  /** Every CLI from an isolated HOME per backend under `agentHome`, against the model at `modelUrl`. */
  agent?: { home: string; modelUrl: string };
  /** Variables on top of the test's clean environment (where the agent CLIs are: SWITCHBOARD_AGENT_PATH). */
  env?: Record<string, string>;
}

export interface SwitchboardNode {
  readonly child: ChildProcess;
  /** Every line on stdout and every chunk on stderr, for an error message. */
  readonly said: string[];
  readonly exited: Promise<void>;
  /** SIGTERM by PID, then SIGKILL to the group if it has not exited after a bound; the group is killed in any case. */
  stop(): Promise<void>;
  /** Sends `signal` to the node's whole process group, unless the node has exited. */
  killGroup(signal: NodeJS.Signals): void;
}

/** Starts the node; see the module comment. */
export async function startSwitchboardNode(options: SwitchboardNodeOptions): Promise<SwitchboardNode> {
  const { url, scratch, name } = options;
  const home = path.join(scratch, `home-${name}`);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(home, 'policy.yaml'), `sandbox:\n  roots: [${JSON.stringify(scratch)}]\n`);
  const args = ['--import', 'tsx', path.join(root, 'src', 'cli', 'main.ts'), '--home', home, 'node', '--controller', url, '--name', name, '--slots', String(options.slots ?? 2), '--backends', (options.backends ?? ['shell']).join(','), '--log-level', 'warn'];
  if (options.labels !== undefined && options.labels.length > 0) args.push('--labels', options.labels.join(','));
  for (const [repo, folder] of Object.entries(options.repos ?? {})) args.push('--repo', `${repo}=${folder}`);
  if (options.agent) args.push('--agent-home', options.agent.home, '--model-url', options.agent.modelUrl);
  const child = spawn(process.execPath, args, { cwd: root, env: { ...cleanEnv(), ...options.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const said: string[] = [];
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => said.push(chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid;
  /** Set once stop() has killed the group: the PID may be another process's by the test process's end. */
  let stopped = false;

  const killGroup = (signal: NodeJS.Signals): void => {
    if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    killGroupQuietly(pid, signal);
  };
  const stop = async (): Promise<void> => {
    if (pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Gone meanwhile.
      }
      const late = await within(exited.then(() => false), WAIT_MS, () => true);
      if (late) killGroup('SIGKILL');
      await exited;
    }
    // Whatever the node's group still holds.
    if (pid !== undefined && !stopped) killGroupQuietly(pid, 'SIGKILL');
    stopped = true;
  };
  // A test process cut short still ends the node's group, by its PID.
  atTestProcessEnd(() => {
    if (pid !== undefined && !stopped) killGroupQuietly(pid, 'SIGKILL');
  });

  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node ${name} did not start pulling within ${WAIT_MS} ms: ${said.join('')}`)), WAIT_MS);
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      said.push(line);
      if (line.includes(READY_LINE)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`node ${name} exited at start: ${said.join('')}`));
    });
  });
  try {
    await ready;
  } catch (err) {
    await stop();
    throw err;
  }
  return { child, said, exited, stop, killGroup };
}

function killGroupQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Nothing left in the group.
  }
}

/**
 * `promise`, or `onLate()` once `ms` passed; an `onLate` that throws rejects the wait with its error
 * (thrown in the timer itself, it would be an uncaught exception and the wait would never end).
 */
export async function within<T>(promise: Promise<T>, ms: number, onLate: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onLate());
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    }, ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
