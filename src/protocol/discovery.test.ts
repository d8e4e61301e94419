import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RUNTIME_FILE_NAME, endpointVariables, formatRuntimeInfo, parseRuntimeInfo, readRuntimeFile, runtimeFilePath, tokenVariables, withoutEndpointVariables, type RuntimeInfo } from './discovery.js';

const INFO: RuntimeInfo = { version: '0.1.0', pid: 42, host: '127.0.0.1', port: 8765, socket: '/tmp/sb.sock', http: { host: '127.0.0.1', port: 8766 }, token: 'a'.repeat(64), started_at: '2026-01-01T00:00:00.000Z' };

describe('the runtime file', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('lives in the home under one name', () => {
    expect(runtimeFilePath('/h')).toBe(path.join('/h', RUNTIME_FILE_NAME));
    expect(RUNTIME_FILE_NAME).toBe('daemon.json');
  });

  it('reads back what the daemon writes', () => {
    expect(parseRuntimeInfo(formatRuntimeInfo(INFO))).toEqual(INFO);
    const home = mkdtempSync(path.join(tmpdir(), 'sb-discovery-'));
    dirs.push(home);
    expect(readRuntimeFile(home)).toBeUndefined();
    writeFileSync(runtimeFilePath(home), formatRuntimeInfo(INFO));
    expect(readRuntimeFile(home)).toEqual(INFO);
  });

  it('is not one without a token and a pid, or with a field of the wrong type', () => {
    expect(parseRuntimeInfo('not json')).toBeUndefined();
    expect(parseRuntimeInfo('null')).toBeUndefined();
    expect(parseRuntimeInfo(JSON.stringify({ ...INFO, token: undefined }))).toBeUndefined();
    expect(parseRuntimeInfo(JSON.stringify({ ...INFO, pid: '42' }))).toBeUndefined();
    expect(parseRuntimeInfo(JSON.stringify({ ...INFO, port: '8765' }))).toBeUndefined();
    expect(parseRuntimeInfo(JSON.stringify({ ...INFO, http: { host: '127.0.0.1', port: '8766' } }))).toBeUndefined();
    expect(parseRuntimeInfo(JSON.stringify({ ...INFO, http: 8766 }))).toBeUndefined();
    expect(parseRuntimeInfo(JSON.stringify({ token: 't', pid: 1 }))).toEqual({ token: 't', pid: 1 });
  });
});

describe("a pane's endpoint variables", () => {
  it('say where the daemon listens, under both names, and carry the pane its own token', () => {
    expect(endpointVariables({ tcp: { host: '127.0.0.1', port: 9 }, socket: '/s' })).toEqual({
      SWITCHBOARD_RPC_HOST: '127.0.0.1',
      SWITCHBOARD_RPC_PORT: '9',
      ENSO_RPC_HOST: '127.0.0.1',
      ENSO_RPC_PORT: '9',
      SWITCHBOARD_RPC_SOCKET: '/s',
    });
    expect(endpointVariables({ socket: '/s' })).toEqual({ SWITCHBOARD_RPC_SOCKET: '/s' });
    expect(tokenVariables('t')).toEqual({ SWITCHBOARD_RPC_TOKEN: 't', ENSO_RPC_TOKEN: 't' });
  });
});

describe('withoutEndpointVariables', () => {
  it('takes out where a daemon listens, its token and the pane, in both namings, and keeps the rest', () => {
    const env = { PATH: '/usr/bin', HOME: '/home/u', SWITCHBOARD_RPC_TOKEN: 't', SWITCHBOARD_RPC_SOCKET: '/s', SWITCHBOARD_RPC_HOST: '127.0.0.1', SWITCHBOARD_RPC_PORT: '1', SWITCHBOARD_PANE_ID: 'p1', ENSO_RPC_TOKEN: 't', ENSO_RPC_HOST: 'h', ENSO_RPC_PORT: '2', SWITCHBOARD_HOME: '/h' };
    expect(withoutEndpointVariables(env)).toEqual({ PATH: '/usr/bin', HOME: '/home/u', SWITCHBOARD_HOME: '/h' });
  });
});
