import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, type SwitchboardClient } from '../src/index.js';
import { DAEMON_NODE_FLAGS, daemonEnv, readRuntimeFile } from '../src/daemon/index.js';

const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli', 'main.js');

/** A Switchboard daemon in its own process (as users run it), with a private home. */
export class DaemonProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly home: string,
    /** The dashboard's one-time login link, as the daemon printed it. */
    readonly loginUrl: string | undefined,
    /** The bridge's HTTP API (`http://127.0.0.1:PORT`, without /api/v2), when the daemon printed one. */
    readonly httpUrl: string | undefined,
  ) {}

  /**
   * `extraEnv` is added to a copy of this process's environment cleaned of Switchboard variables;
   * `extraArgs` go after the daemon's own (`--agent-home DIR --model-url URL`). `prepareHome` runs
   * on the fresh home before the daemon starts (a policy.yaml).
   */
  static async start(extraEnv: Record<string, string> = {}, extraArgs: string[] = [], prepareHome?: (home: string) => void): Promise<DaemonProcess> {
    const home = mkdtempSync(path.join(tmpdir(), 'sb-bench-'));
    prepareHome?.(home);
    const inherited = Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_') && !k.startsWith('ENSO_RPC_'));
    const env = daemonEnv({ ...Object.fromEntries(inherited), ...extraEnv });
    // Launched as `switchboard up` launches it.
    const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, CLI, '--home', home, 'daemon', '--port', '0', '--dashboard-port', '0', '--log-level', 'warn', ...extraArgs], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          // The dashboard's line is the last the daemon prints at start.
          if (out.includes('dashboard: open ')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`daemon exited early (${code})`)));
      });
    } catch (err) {
      // A daemon that never started leaves no home behind.
      rmSync(home, { recursive: true, force: true });
      throw err;
    }
    return new DaemonProcess(child, home, /dashboard: open (\S+)/.exec(out)?.[1], /HTTP API: (http:\/\/\S+?)\/api\/v2\//.exec(out)?.[1]);
  }

  /** The daemon's token, from its runtime file (the HTTP API's bearer token). */
  get token(): string {
    const token = readRuntimeFile(this.home)?.token;
    if (token === undefined) throw new Error(`no runtime file in ${this.home}`);
    return token;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  connect(preferTcp = false): Promise<SwitchboardClient> {
    return connect({ home: this.home, preferTcp, env: {} });
  }

  async stop(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    await exited;
    rmSync(this.home, { recursive: true, force: true });
  }
}
