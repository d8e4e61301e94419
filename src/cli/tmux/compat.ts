/**
 * `switchboard compat install`: puts a `tmux` (and a `herdr`) in a folder of Switchboard's for the
 * user to put first on PATH. Where a C compiler exists (node-pty's build already needs one), `tmux`
 * is the small C launcher, compiled here; otherwise, and on Windows (`tmux.cmd`, `herdr.cmd`),
 * a script that runs the Node launcher. Both find the daemon through the runtime file, so no token
 * is ever written into them.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isWindows, resolveExecutable, writeNodeLaunchers, type LauncherOptions } from '../../platform/index.js';

export interface CompatInstallOptions {
  /** Where the launchers go. */
  dir: string;
  /** A Switchboard home to build into the launchers (when the user chose one); else they find it at run time. */
  home: string | undefined;
  /** Compile the C launcher when a compiler is found (default true). */
  compile?: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface CompatInstallResult {
  dir: string;
  files: string[];
  /** 'native' when `tmux` is the compiled C launcher. */
  tmux: 'native' | 'node';
  notes: string[];
}

const here = path.dirname(fileURLToPath(import.meta.url));
const ext = path.extname(fileURLToPath(import.meta.url));

/**
 * The scripts the launchers run, next to this module (in dist, or in src under tsx): an entry's
 * CommonJS bundle when the build made one (it starts without Node's ESM loader), else the module.
 */
function scripts(): { tmux: string; herdr: string; cli: string } {
  const entry = (name: string): string => {
    const bundle = path.join(here, `${name}.cjs`);
    return existsSync(bundle) ? bundle : path.join(here, `${name}${ext}`);
  };
  return { tmux: entry('tmux-main'), herdr: entry('herdr-main'), cli: path.join(here, '..', `main${ext}`) };
}

/** The C source: shipped beside the sources (the package includes src/cli/tmux/native). */
function cSource(): string | undefined {
  const candidates = [path.join(here, 'native', 'tmux-launcher.c'), path.join(here, '..', '..', '..', 'src', 'cli', 'tmux', 'native', 'tmux-launcher.c')];
  return candidates.find((c) => existsSync(c));
}

const cString = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

const NOTE = "Written by `switchboard compat install`: runs Switchboard's front end.";

/**
 * The flags of the build without the C library (native/sys-nolibc.h), Linux x86_64 only: glibc's
 * start-up costs more than the daemon's answer in a virtual machine (its `cpuid`s), and this
 * program needs nothing of glibc. Anywhere else, or when it fails to build, the ordinary build.
 */
// -fno-tree-loop-distribute-patterns: GCC would otherwise turn the byte loops of our own memset and
// memcpy into calls to memset and memcpy, that is, into themselves (a review found memset so).
const NOLIBC_FLAGS = ['-DSB_NOLIBC', '-static', '-nostdlib', '-fno-stack-protector', '-fno-pie', '-no-pie', '-fno-tree-loop-distribute-patterns'];

function compileLauncher(compiler: string, source: string, output: string, defines: Record<string, string>, flags: readonly string[] = []): Promise<string | undefined> {
  const args = ['-O2', ...flags, '-o', output, source, ...Object.entries(defines).map(([k, v]) => `-D${k}=${cString(v)}`)];
  return new Promise((resolve) => {
    execFile(compiler, args, { timeout: 120_000 }, (err, _stdout, stderr) => resolve(err ? (stderr.trim() || err.message) : undefined));
  });
}

/** Writes the launchers into `options.dir`. */
export async function installCompat(options: CompatInstallOptions): Promise<CompatInstallResult> {
  const env = options.env ?? process.env;
  const dir = path.resolve(options.dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { tmux, herdr, cli } = scripts();
  const notes: string[] = [];
  const files: string[] = [];
  const launcherOptions: LauncherOptions = { ...(options.home !== undefined ? { env: { SWITCHBOARD_HOME: options.home } } : {}), nodeArgs: process.execArgv };
  if (isWindows) {
    files.push(...writeNodeLaunchers(dir, { tmux, herdr }, NOTE, launcherOptions));
    return { dir, files, tmux: 'node', notes };
  }
  files.push(...writeNodeLaunchers(dir, { 'tmux-node': tmux, herdr }, NOTE, launcherOptions));
  let kind: 'native' | 'node' = 'node';
  const compiler = options.compile === false ? undefined : resolveExecutable(env.CC ?? 'cc', env, dir) ?? resolveExecutable('gcc', env, dir) ?? resolveExecutable('clang', env, dir);
  const source = cSource();
  if (options.compile !== false && compiler && source && process.execArgv.length === 0) {
    const defines: Record<string, string> = { SB_NODE: process.execPath, SB_SCRIPT: tmux, SB_CLI: cli };
    if (options.home !== undefined) defines.SB_HOME = options.home;
    const output = path.join(dir, 'tmux');
    const bare = process.platform === 'linux' && process.arch === 'x64' ? await compileLauncher(compiler, source, output, defines, NOLIBC_FLAGS) : 'not Linux x86_64';
    const error = bare === undefined ? undefined : await compileLauncher(compiler, source, output, defines);
    if (error === undefined) {
      kind = 'native';
      files.push(output);
    } else notes.push(`the C launcher did not compile (${error.split('\n')[0] ?? ''}); tmux runs the Node launcher instead`);
  } else if (options.compile !== false) {
    notes.push(compiler ? 'the C launcher was not compiled (no source, or running from sources): tmux runs the Node launcher' : 'no C compiler found: tmux runs the Node launcher (slower to start)');
  }
  if (kind === 'node') files.push(...writeNodeLaunchers(dir, { tmux }, NOTE, launcherOptions));
  return { dir, files, tmux: kind, notes };
}
