import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { connect, RpcError, type SwitchboardClient } from '../../src/index.js';
import { startTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { tempDir } from '../support/shell.js';

// An agent that prints the environment it was given, so the test sees exactly what a CLI would.
const ENVDUMP = `#!/usr/bin/env bash
echo "HOME=$HOME"
echo "TOKEN=\${ANTHROPIC_AUTH_TOKEN:-unset}"
echo "EXTRA=\${ENVDUMP_SECRET:-unset}"
echo "PROFILE=\${ENVDUMP_FROM_PROFILE:-unset}"
echo "KEEP=\${KEEP_ME:-unset}"
echo "CI=\${CI-unset} GHA=\${GITHUB_ACTIONS-unset} CIJOB=\${CI_JOB_ID-unset}"
while read -r -p "envdump> " line; do :; done
`;

const AGENTS = `agents:
  - name: envdump
    binary: { names: [envdump-is-not-on-path], env: SB_TEST_ENVDUMP_BIN }
    version_args: null
    env: { ENVDUMP_FROM_PROFILE: set-by-profile }
    sandbox_unset: [ENVDUMP_*]
    home_files:
      envdump.conf: "url={model_url} cwd={cwd}"
    screens:
      - versions: "*"
        idle: [{ pattern: "^envdump>$", rows: 1 }]
    approval_keys: { allow_once: [y], deny: [n] }
`;

let dir: { dir: string; cleanup: () => void };
let daemon: Awaited<ReturnType<typeof startTestDaemon>>;
let client: SwitchboardClient;

beforeAll(async () => {
  dir = tempDir('sb-sandbox-');
  const bin = path.join(dir.dir, 'envdump');
  writeFileSync(bin, ENVDUMP);
  chmodSync(bin, 0o755);
  const agentsFile = path.join(dir.dir, 'agents.yaml');
  writeFileSync(agentsFile, AGENTS);
  const env = { ...cleanEnv(), SB_TEST_ENVDUMP_BIN: bin, ANTHROPIC_AUTH_TOKEN: 'users-real-token', ENVDUMP_SECRET: 'users-secret', KEEP_ME: 'kept', CI: 'true', GITHUB_ACTIONS: 'true', CI_JOB_ID: '42' };
  daemon = await startTestDaemon({ agentsFile, env });
  client = await connect({ home: daemon.home, env: cleanEnv() });
});

afterAll(async () => {
  client.close();
  await daemon.stop();
  dir.cleanup();
});

async function screenOf(paneId: string): Promise<string> {
  return (await client.getText(paneId, { lines: 20 })).text;
}

describe('an agent run from an isolated HOME', () => {
  it("gets the sandbox HOME and the profile's variables, and none of the user's keys", async () => {
    const home = path.join(dir.dir, 'agent-home');
    const created = await client.createPane({ agent: 'envdump', cwd: dir.dir, agent_home: home, model_url: 'http://127.0.0.1:9/v1/' });
    const text = await screenOf(created.pane_id);
    expect(text).toContain(`HOME=${home}`);
    expect(text).toContain('TOKEN=unset');
    expect(text).toContain('EXTRA=unset');
    expect(text).toContain('PROFILE=set-by-profile');
    expect(text).toContain('KEEP=kept');
    expect(readFileSync(path.join(home, 'envdump.conf'), 'utf8')).toBe(`url=http://127.0.0.1:9/v1 cwd=${dir.dir}`);
    await client.remove(created.pane_id);
  });

  it("keeps the user's environment when it runs as the user", async () => {
    const created = await client.createPane({ agent: 'envdump', cwd: dir.dir });
    const text = await screenOf(created.pane_id);
    expect(text).toContain(`HOME=${homedir()}`);
    expect(text).toContain('TOKEN=users-real-token');
    expect(text).toContain('EXTRA=users-secret');
    // A daemon started under CI still gives its agents an interactive terminal: the markers are
    // removed, not set to "false" (supports-color turns colour off when CI exists at all).
    expect(text).toContain('CI=unset GHA=unset CIJOB=unset');
    await client.remove(created.pane_id);
  });

  it("refuses a HOME that would overwrite the user's own configuration, and a bad model URL", async () => {
    const refusal = async (params: Parameters<SwitchboardClient['createPane']>[0]): Promise<RpcError> => {
      const err = await client.createPane(params).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RpcError);
      return err as RpcError;
    };
    const own = await refusal({ agent: 'envdump', cwd: dir.dir, agent_home: homedir(), model_url: 'http://127.0.0.1:9' });
    expect(own.rpcErrorCode).toBe(-32602);
    expect(own.message).toMatch(/your own home/);
    const relative = await refusal({ agent: 'envdump', cwd: dir.dir, agent_home: 'relative/home', model_url: 'http://127.0.0.1:9' });
    expect(relative.message).toMatch(/absolute/);
    const query = await refusal({ agent: 'envdump', cwd: dir.dir, agent_home: path.join(dir.dir, 'h2'), model_url: 'http://127.0.0.1:9/?key=x' });
    expect(query.message).toMatch(/query/);
    const noCwd = await refusal({ agent: 'envdump' });
    expect(noCwd.rpcErrorCode).toBe(-32602);
    expect(noCwd.message).toMatch(/needs cwd/);
    expect((await client.list()).panes).toHaveLength(0);
  });
});
