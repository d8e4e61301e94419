import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../core/errors.js';
import { formatRuntimeInfo, runtimeFilePath, type RuntimeInfo } from '../protocol/discovery.js';
import { NO_DAEMON_MESSAGE, resolveEndpoint } from './endpoint.js';

const INFO: RuntimeInfo = { version: '0.1.0', pid: 42, host: '127.0.0.1', port: 8765, socket: '/tmp/sb.sock', token: 'file-token', started_at: '2026-01-01T00:00:00.000Z' };
const posix = process.platform !== 'win32';

describe('finding the daemon', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** A private home (0700) holding a 0600 runtime file. */
  function home(info: RuntimeInfo = INFO): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'sb-endpoint-'));
    dirs.push(dir);
    chmodSync(dir, 0o700);
    writeFileSync(runtimeFilePath(dir), formatRuntimeInfo(info), { mode: 0o600 });
    return dir;
  }

  function refusal(fn: () => unknown): string {
    try {
      fn();
    } catch (err) {
      if (isSwitchboardError(err, 'CONNECTION_FAILED')) return err.message;
      throw err;
    }
    throw new Error('expected CONNECTION_FAILED');
  }

  it('takes explicit options first', () => {
    expect(resolveEndpoint({ port: 9000, token: 't', env: {} })).toEqual({ socketPath: undefined, host: '127.0.0.1', port: 9000, token: 't', source: 'options' });
  });

  it("takes a pane's variables next, under either name", () => {
    expect(resolveEndpoint({ env: { SWITCHBOARD_RPC_TOKEN: 't', SWITCHBOARD_RPC_SOCKET: '/s' } })).toEqual({ socketPath: '/s', host: '127.0.0.1', port: undefined, token: 't', source: 'environment' });
    expect(resolveEndpoint({ env: { ENSO_RPC_TOKEN: 't', ENSO_RPC_PORT: '9', ENSO_RPC_HOST: '127.0.0.2' } })).toEqual({ socketPath: undefined, host: '127.0.0.2', port: 9, token: 't', source: 'environment' });
  });

  // What an MCP server started by Gemini CLI gets outside a pane: its entry's `${NAME:-}` expanded
  // to nothing, or (a CLI that cannot expand it) left as written.
  it('takes variables that are empty, or still a reference to a variable, for unset', () => {
    // The daemon's home is known (SWITCHBOARD_HOME), the pane's variables are not.
    const passed = (value: (name: string) => string): Record<string, string> => ({
      ...Object.fromEntries(['SWITCHBOARD_RPC_HOST', 'SWITCHBOARD_RPC_PORT', 'SWITCHBOARD_RPC_SOCKET', 'SWITCHBOARD_RPC_TOKEN', 'SWITCHBOARD_PANE_ID'].map((n) => [n, value(n)])),
      SWITCHBOARD_HOME: home(),
    });
    const fromFile = { socketPath: '/tmp/sb.sock', host: '127.0.0.1', port: 8765, token: 'file-token', source: 'runtime file' };
    for (const value of [() => '', (n: string) => `\${${n}:-}`, (n: string) => `\${${n}}`, (n: string) => `$${n}`]) {
      expect(resolveEndpoint({ env: passed(value) })).toEqual(fromFile);
    }
  });

  it('reads the runtime file of the home otherwise', () => {
    expect(resolveEndpoint({ home: home(), env: {} })).toEqual({ socketPath: '/tmp/sb.sock', host: '127.0.0.1', port: 8765, token: 'file-token', source: 'runtime file' });
    const empty = mkdtempSync(path.join(tmpdir(), 'sb-endpoint-'));
    dirs.push(empty);
    expect(refusal(() => resolveEndpoint({ home: empty, env: {} }))).toBe(NO_DAEMON_MESSAGE);
  });

  it.runIf(posix)('refuses a runtime file others could have written, or a link to one', () => {
    const open = home();
    chmodSync(runtimeFilePath(open), 0o666);
    expect(refusal(() => resolveEndpoint({ home: open, env: {} }))).toMatch(/^refusing to trust the runtime file/);
    const shared = home();
    chmodSync(shared, 0o777);
    expect(refusal(() => resolveEndpoint({ home: shared, env: {} }))).toMatch(/^refusing to trust the runtime file/);
    const linked = mkdtempSync(path.join(tmpdir(), 'sb-endpoint-'));
    dirs.push(linked);
    chmodSync(linked, 0o700);
    mkdirSync(path.join(linked, 'elsewhere'), { mode: 0o700 });
    writeFileSync(path.join(linked, 'elsewhere', 'daemon.json'), formatRuntimeInfo(INFO), { mode: 0o600 });
    symlinkSync(path.join(linked, 'elsewhere', 'daemon.json'), runtimeFilePath(linked));
    expect(refusal(() => resolveEndpoint({ home: linked, env: {} }))).toMatch(/^refusing to trust the runtime file/);
  });
});
