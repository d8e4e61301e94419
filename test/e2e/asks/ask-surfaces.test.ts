/**
 * Asks on the daemon's surfaces, against a real daemon, a real Codex CLI in a pane and the scripted
 * model: the MCP SDK's own client over both transports (`switchboard mcp` on stdio, Streamable HTTP
 * on the daemon's HTTP port with its token, Host and Origin checks): tools listed, each called,
 * errors for bad arguments. From a shell, `cask "…"` prints Codex's answer and exits 0; two asks at
 * once each get their own answer, in order; a timeout exits 2 and leaves Codex usable; an ask to an
 * exited pane fails at once.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type SwitchboardClient } from '../../../src/client/index.js';
import { MCP_TOOLS } from '../../../src/surfaces/mcp/server.js';
import { useScriptedModel } from '../scripted-model.js';
import { CLI, cleanEnv, runCli, type CliResult } from '../../support/cli.js';
import { useTestDaemon } from '../../support/daemon.js';

const ALIAS = (name: string): string => path.join(path.dirname(CLI), 'aliases', `${name}.js`);

const sm = useScriptedModel({
  name: 'ask-surfaces',
  title: 'Asks on every surface',
  rules: [
    { match: 'capital of France', steps: [{ text: 'Paris is the capital of France.', delay_ms: 1_000 }] },
    { match: 'largest planet', steps: [{ text: 'Jupiter is the largest planet.', delay_ms: 200 }] },
    { match: 'smallest planet', steps: [{ text: 'Mercury is the smallest planet.' }] },
    { match: 'think for long', steps: [{ text: 'That took a while.', delay_ms: 8_000 }] },
  ],
});
const ctx = useTestDaemon({ dashboard: { port: 0 } });

let client: SwitchboardClient;
let codexPane: string;
let catPane: string;
let work: string;

beforeAll(async () => {
  client = await connect({ home: ctx.home });
  work = path.join(ctx.work, 'project');
  mkdirSync(work, { recursive: true });
  const home = sm.tempDir('sb-ask-codex-home-').dir;
  const codex = await client.createPane({ agent: 'codex', cwd: work, agent_home: home, model_url: sm.model.url, cols: 120, rows: 40, ready_timeout_ms: 120_000 });
  codexPane = codex.pane_id;
  // Switchboard's MCP server is in the sandboxed Codex's configuration, passing the pane's variables.
  const toml = readFileSync(path.join(home, '.codex', 'config.toml'), 'utf8');
  expect(toml).toContain('[mcp_servers.switchboard]');
  expect(toml).toContain('"SWITCHBOARD_RPC_TOKEN"');
  catPane = (await client.createPane({ argv: ['cat'], cwd: work, title: 'echo' })).pane_id;
}, 180_000);

afterAll(() => {
  client.close();
});

const text = (r: CallToolResult): string => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
const call = async (mcp: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> => (await mcp.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;

/** Every tool, each called, and bad arguments refused, through one connected MCP client. */
async function exerciseTools(mcp: Client, tag: string): Promise<void> {
  const { tools } = await mcp.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual([...MCP_TOOLS].sort());

  const listed = await call(mcp, 'list_agents', {});
  expect(listed.isError).toBeFalsy();
  expect(listed.structuredContent).toMatchObject({ agents: expect.arrayContaining([expect.objectContaining({ pane_id: codexPane, agent: 'codex', folder: work, askable: true })]) as unknown });

  const asked = await call(mcp, 'ask', { target: codexPane, question: 'What is the largest planet?' });
  expect(asked.isError).toBeFalsy();
  expect(text(asked)).toBe('Jupiter is the largest planet.');

  const queued = await call(mcp, 'ask', { target: 'codex', question: 'What is the smallest planet?', wait: false });
  const askId = (queued.structuredContent as { ask_id: string }).ask_id;
  expect(askId).toMatch(/^[0-9a-f]{10}$/);
  const result = await call(mcp, 'ask_result', { ask_id: askId, wait_ms: 60_000 });
  expect(result.structuredContent).toMatchObject({ ask_id: askId, status: 'done', reply: 'Mercury is the smallest planet.' });

  const sent = await call(mcp, 'send', { pane_id: catPane, text: `hello ${tag}` });
  expect(sent.isError).toBeFalsy();
  const seen = await call(mcp, 'wait', { pane_id: catPane, until: 'pattern', pattern: `hello ${tag}`, timeout_ms: 20_000 });
  expect(seen.structuredContent).toMatchObject({ matched: true });
  expect(text(await call(mcp, 'read', { pane_id: catPane, lines: 20 }))).toContain(`hello ${tag}`);
  expect(await call(mcp, 'wait', { pane_id: codexPane, until: 'idle', timeout_ms: 30_000 })).toMatchObject({ structuredContent: { matched: true, state: 'idle' } });

  // Bad arguments and refusals: tool errors with the problem named.
  const missing = await call(mcp, 'ask', { target: 'codex' });
  expect(missing.isError).toBe(true);
  expect(text(missing)).toMatch(/question/);
  expect(await call(mcp, 'ask', { target: 'nobody-here', question: 'hi' })).toMatchObject({ isError: true, structuredContent: { error: { code: 'PANE_NOT_FOUND' } } });
  const badId = await call(mcp, 'ask_result', { ask_id: 'nope' });
  expect(badId.isError).toBe(true);
  expect(text(badId)).toMatch(/ten hex digits/);
  expect(await call(mcp, 'wait', { pane_id: catPane, until: 'idle', timeout_ms: 1_000 })).toMatchObject({ isError: true, structuredContent: { error: { code: 'NOT_AN_AGENT' } } });
  expect(await call(mcp, 'read', { pane_id: 'no-such-pane', lines: 5 })).toMatchObject({ isError: true, structuredContent: { error: { code: 'PANE_NOT_FOUND' } } });
}

/** A raw HTTP request to the daemon's HTTP port, with the headers given as they are. */
function rawPost(port: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }));
  });
}

describe('MCP on both transports', { timeout: 300_000 }, () => {
  it('serves the tools over stdio (`switchboard mcp`)', async () => {
    const mcp = new Client({ name: 'stdio-test', version: '1.0.0' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, '--home', ctx.home, 'mcp'], env: cleanEnv() as Record<string, string>, cwd: work, stderr: 'pipe' });
    await mcp.connect(transport);
    try {
      await exerciseTools(mcp, 'stdio');
    } finally {
      await mcp.close();
    }
  });

  it('serves the tools over Streamable HTTP on the daemon, with its token, Host and Origin checked', async () => {
    const port = ctx.daemon.dashboard?.port ?? 0;
    expect(port).toBeGreaterThan(0);
    const url = new URL(`http://127.0.0.1:${port}/mcp`);
    const mcp = new Client({ name: 'http-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${ctx.daemon.token}` } } }));
    try {
      await exerciseTools(mcp, 'http');
    } finally {
      await mcp.close();
    }
    expect(await rawPost(port, { host: `127.0.0.1:${port}`, authorization: `Bearer ${ctx.daemon.token}` })).toBe(200);
    expect(await rawPost(port, { host: `127.0.0.1:${port}` })).toBe(401);
    expect(await rawPost(port, { host: `127.0.0.1:${port}`, authorization: 'Bearer not-the-token' })).toBe(401);
    expect(await rawPost(port, { host: `evil.example:${port}`, authorization: `Bearer ${ctx.daemon.token}` })).toBe(403);
    expect(await rawPost(port, { host: `127.0.0.1:${port}`, origin: 'http://evil.example', authorization: `Bearer ${ctx.daemon.token}` })).toBe(403);
  });
});

/** Runs an alias (`cask …`) as a shell would. */
function runAlias(alias: string, args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [ALIAS(alias), '--home', ctx.home, ...args], { env: cleanEnv(), cwd: work, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('ask from a shell', { timeout: 300_000 }, () => {
  it('`cask "…"` prints Codex\'s answer and exits 0; the question can come on stdin', async () => {
    const asked = await runAlias('cask', ['What is the capital of France?']);
    expect(asked, asked.stderr).toMatchObject({ code: 0, stdout: 'Paris is the capital of France.\n' });
    const piped = await runCli(ctx.home, ['ask', 'codex'], { input: 'What is the largest planet?\n', timeoutMs: 120_000 });
    expect(piped, piped.stderr).toMatchObject({ code: 0, stdout: 'Jupiter is the largest planet.\n' });
  });

  it('answers two asks made at once each with its own answer, in order', async () => {
    const [a, b] = await Promise.all([runAlias('cask', ['What is the capital of France?']), runAlias('cask', ['What is the smallest planet?'])]);
    expect(a, a.stderr).toMatchObject({ code: 0, stdout: 'Paris is the capital of France.\n' });
    expect(b, b.stderr).toMatchObject({ code: 0, stdout: 'Mercury is the smallest planet.\n' });
    const { asks } = await client.askList();
    const mine = asks.filter((x) => x.question === 'What is the capital of France?' || x.question === 'What is the smallest planet?').slice(-2);
    expect(mine).toHaveLength(2);
    const [first, second] = [...mine].sort((x, y) => (x.started_at ?? 0) - (y.started_at ?? 0));
    // One at a time: the second went in after the first was answered.
    expect(second?.started_at ?? 0).toBeGreaterThanOrEqual(first?.ended_at ?? Infinity);
  });

  it('--async returns the job at once; ask wait gets its answer', async () => {
    const started = await runAlias('cask', ['--async', 'What is the largest planet?']);
    expect(started.code, started.stderr).toBe(0);
    const id = started.stdout.trim();
    expect(id).toMatch(/^[0-9a-f]{10}$/);
    const waited = await runCli(ctx.home, ['ask', 'wait', id], { timeoutMs: 120_000 });
    expect(waited, waited.stderr).toMatchObject({ code: 0, stdout: 'Jupiter is the largest planet.\n' });
    const got = await runCli(ctx.home, ['ask', 'get', id, '--json']);
    expect(JSON.parse(got.stdout)).toMatchObject({ ask_id: id, status: 'done', reply_source: 'transcript' });
  });

  it('a timeout exits 2 and leaves Codex usable; an ask to an exited pane fails at once', async () => {
    const slow = await runAlias('cask', ['--timeout', '2', 'Please think for long.']);
    expect(slow.code, slow.stderr).toBe(2);
    expect(slow.stderr).toMatch(/timed out/);
    const after = await runAlias('cask', ['What is the smallest planet?']);
    expect(after, after.stderr).toMatchObject({ code: 0, stdout: 'Mercury is the smallest planet.\n' });

    await client.kill(codexPane, { graceMs: 1_000 });
    const gone = await runCli(ctx.home, ['ask', codexPane, 'Anyone there?']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/exited/);
    const none = await runAlias('cask', ['Anyone there?']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/exited/);
  });
});
