/**
 * A risk of issue 11, least privilege for agents: every pane got the owner's token, so a program in
 * an agent pane could start any command in a new pane, past the approval policy. An agent pane's
 * programs get a token of their own now (read and ask, plus what the user grants), checked on every
 * call; a shell the user opens still gets the owner's.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { connect } from '../../src/index.js';
import { useTestDaemon } from '../support/daemon.js';
import { cleanEnv } from '../support/cli.js';
import { BASH_ARGV, BASH_ENV, SHELL_AGENT_ENV } from '../support/shell.js';
import { until, untilProgram } from '../support/processes.js';

const t = useTestDaemon();
const LIBRARY = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'index.js');

/** A pane's environment variable, read from its process. */
function envOf(pid: number, name: string): string | undefined {
  const entry = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith(`${name}=`));
  return entry?.slice(name.length + 1);
}

/** `name` in the environment of `pid` once it runs `program`: before its exec, the process still has the daemon's environment. */
async function envAfterExec(pid: number, program: string, name: string): Promise<string | undefined> {
  await untilProgram(pid, program);
  return envOf(pid, name);
}

/**
 * A program for a pane: calls the daemon with the token the pane was given (the client library
 * finds it in the environment), each call's outcome as a JSON line in `out`.
 */
function callerScript(out: string, calls: { method: string; params: Record<string, unknown> }[]): string {
  return `import { connect } from ${JSON.stringify(LIBRARY)};
import { appendFileSync } from 'node:fs';
const client = await connect();
for (const call of ${JSON.stringify(calls)}) {
  const outcome = await client.request(call.method, call.params).then((result) => ({ ok: true, result }), (err) => ({ ok: false, code: err.code, message: err.message }));
  appendFileSync(${JSON.stringify(out)}, JSON.stringify({ method: call.method, ...outcome }) + '\\n');
}
client.close();
`;
}

async function runInPane(paneId: string, name: string, calls: { method: string; params: Record<string, unknown> }[]): Promise<{ method: string; ok: boolean; code?: string; message?: string; result?: unknown }[]> {
  const script = path.join(t.work, `${name}.mjs`);
  const out = path.join(t.work, `${name}.jsonl`);
  writeFileSync(script, callerScript(out, calls));
  writeFileSync(out, '');
  const owner = await connect({ home: t.home, env: cleanEnv() });
  await owner.sendText(paneId, `node ${script}`, { addNewline: true });
  owner.close();
  const read = (): string[] => readFileSync(out, 'utf8').split('\n').filter(Boolean);
  await until(() => read().length === calls.length, `${name}: every call's outcome`, 30_000);
  return read().map((l) => JSON.parse(l) as { method: string; ok: boolean; code?: string; message?: string });
}

describe.runIf(process.platform === 'linux')('tokens and scopes', () => {
  it('gives an agent pane a token that can read and ask, but not create, type into another pane, or answer an approval', async () => {
    const owner = await connect({ home: t.home, env: cleanEnv() });
    const victim = await owner.createPane({ argv: [...BASH_ARGV], env: BASH_ENV, cwd: t.work });
    const agent = await owner.createPane({ agent: 'shell', cwd: t.work, env: SHELL_AGENT_ENV(t.work) });
    const peer = await owner.createPane({ agent: 'shell', cwd: t.work, env: SHELL_AGENT_ENV(t.work) });
    // The owner's token went to the shell the user opened, never to the agents.
    expect(await envAfterExec(victim.pid, 'bash', 'SWITCHBOARD_RPC_TOKEN')).toBe(t.daemon.token);
    expect(envOf(agent.pid, 'SWITCHBOARD_RPC_TOKEN')).not.toBe(t.daemon.token);
    expect(envOf(agent.pid, 'ENSO_RPC_TOKEN')).toBe(envOf(agent.pid, 'SWITCHBOARD_RPC_TOKEN'));

    const outcomes = await runInPane(agent.pane_id, 'agent-calls', [
      { method: 'list', params: {} },
      { method: 'get_text', params: { pane_id: victim.pane_id } },
      { method: 'create_pane', params: { command: `touch ${path.join(t.work, 'pwned')}` } },
      { method: 'send_text', params: { pane_id: victim.pane_id, text: 'touch pwned', add_newline: true } },
      { method: 'send_prompt', params: { pane_id: victim.pane_id, text: 'touch pwned' } },
      { method: 'answer_approval', params: { pane_id: peer.pane_id, decision: 'allow' } },
      { method: 'shutdown', params: {} },
      { method: 'send_prompt', params: { pane_id: peer.pane_id, text: 'echo asked-by-agent' } },
    ]);
    const by = (method: string, n = 0): (typeof outcomes)[number] => outcomes.filter((o) => o.method === method)[n] as (typeof outcomes)[number];
    expect(by('list').ok).toBe(true);
    expect(by('get_text').ok).toBe(true);
    expect(by('create_pane')).toMatchObject({ ok: false, code: 'FORBIDDEN' });
    expect(by('create_pane').message).toMatch(new RegExp(`^forbidden: the token of pane ${agent.pane_id} may not call create_pane: it needs the scope 'create' \\(start panes, agents, runs and agent sessions\\); the user grants it when starting the pane \\(create_pane \\{grants: \\["create"\\]\\}, or \`switchboard new --agent NAME --grant create\`\\)$`));
    expect(by('send_text')).toMatchObject({ ok: false, code: 'FORBIDDEN', message: expect.stringContaining("it needs the scope 'send'") as unknown });
    expect(by('send_prompt')).toMatchObject({ ok: false, code: 'FORBIDDEN', message: expect.stringContaining(`pane ${victim.pane_id} is not an agent pane; asking is for agents`) as unknown });
    expect(by('answer_approval')).toMatchObject({ ok: false, code: 'FORBIDDEN', message: expect.stringContaining("it needs the scope 'approve'") as unknown });
    expect(by('shutdown')).toMatchObject({ ok: false, code: 'FORBIDDEN', message: expect.stringContaining("it needs the scope 'admin'") as unknown });
    // Asking another agent is what the token is for.
    expect(by('send_prompt', 1).ok).toBe(true);
    await owner.waitFor(peer.pane_id, { pattern: 'asked-by-agent' });
    expect((await owner.list()).panes).toHaveLength(3);
    for (const p of [victim, agent, peer]) await owner.remove(p.pane_id);
    owner.close();
  });

  it('gives an agent what the user grants, and a pane it starts no more than it has itself', async () => {
    const owner = await connect({ home: t.home, env: cleanEnv() });
    const agent = await owner.createPane({ agent: 'shell', cwd: t.work, env: SHELL_AGENT_ENV(t.work), grants: ['create'] });
    const [created] = await runInPane(agent.pane_id, 'granted-calls', [{ method: 'create_pane', params: { argv: ['sleep', '60'], cwd: t.work } }]);
    expect(created).toMatchObject({ ok: true });
    const child = (created?.result as { pane_id: string; pid: number });
    const childToken = await envAfterExec(child.pid, 'sleep', 'SWITCHBOARD_RPC_TOKEN');
    expect(childToken).not.toBe(t.daemon.token);
    expect([...(t.daemon.tokens.resolve(childToken)?.scopes ?? [])].sort()).toEqual(['ask', 'create', 'read']);
    // Removed with its pane, the token is worth nothing.
    await owner.remove(child.pane_id);
    expect(t.daemon.tokens.resolve(childToken)).toBeUndefined();
    await owner.remove(agent.pane_id);
    owner.close();
  });
});
