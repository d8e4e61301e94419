/**
 * Switchboard's MCP server: the tools an agent gets to work with other agents (list_agents, ask,
 * ask_result, send, read, wait), over an McpBackend. Built with the official SDK's McpServer; any
 * transport the SDK offers carries it (stdio for `switchboard mcp`, Streamable HTTP on the daemon,
 * in memory in tests). Arguments are checked by the tools' schemas before the backend sees them;
 * a backend error becomes a tool result marked as an error whose text starts with the stable code,
 * so the calling model can read what went wrong and the call itself never fails the session.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { errorMessage, isSwitchboardError, SwitchboardError } from '../../core/errors.js';
import { switchboardVersion } from '../../core/version.js';
import { ASK_ID_SOURCE, ASK_ID_WORDS, DEFAULT_ASK_TIMEOUT_MS, MAX_ASK_TIMEOUT_MS, MAX_QUESTION_CHARS } from '../../contract/ask.js';
import type { McpAskResult, McpBackend } from './backend.js';

/** The tool names, as agents see them. */
export const MCP_TOOLS = ['list_agents', 'ask', 'ask_result', 'send', 'read', 'wait'] as const;

/** Bounds on what a tool call may ask for. */
const MCP_MAX_READ_LINES = 2_000;
const MCP_MAX_WAIT_MS = 10 * 60_000;
const MCP_MAX_TEXT_CHARS = 100_000;

const paneId = z.string().min(1).max(200).describe('The pane id (from list_agents).');

export function ok(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

export function failure(err: unknown): CallToolResult {
  const code = isSwitchboardError(err) ? err.code : 'INTERNAL_ERROR';
  return { content: [{ type: 'text', text: `${code}: ${errorMessage(err)}` }], isError: true, structuredContent: { error: { code, message: errorMessage(err) } } };
}

/** Runs a tool's work; an error becomes the tool's error result. */
async function guarded(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (err) {
    return failure(err);
  }
}

function describeAsk(a: McpAskResult): string {
  const who = a.target.agent ?? a.target.title;
  if (a.status === 'done') return a.reply ?? '';
  if (a.error) return `ask ${a.ask_id} to ${who} (pane ${a.target.pane_id}): ${a.status}: ${a.error.code}: ${a.error.message}`;
  return `ask ${a.ask_id} to ${who} (pane ${a.target.pane_id}) is ${a.status}; call ask_result with this ask_id for the reply`;
}

const askResult = (a: McpAskResult): CallToolResult => ({ ...ok(describeAsk(a), { ...a }), ...(a.status === 'failed' || a.status === 'timed_out' || a.status === 'cancelled' ? { isError: true } : {}) });

/** An MCP server whose tools call `backend`; connect it to a transport. */
export function createMcpServer(backend: McpBackend): McpServer {
  const server = new McpServer({ name: 'switchboard', version: switchboardVersion() }, { capabilities: { tools: {} } });

  server.registerTool(
    'list_agents',
    {
      title: 'List agents',
      description: 'The panes Switchboard runs: pane id, agent, what it is doing (state), its folder and title, and whether it may be asked.',
      inputSchema: {},
      annotations: { readOnlyHint: true },
    },
    () =>
      guarded(async () => {
        const agents = await backend.listAgents();
        const lines = agents.map((a) => `${a.pane_id}  ${a.agent ?? '-'}  ${a.state}  ${a.title}  ${a.folder}${a.askable ? '' : '  (not askable)'}`);
        return ok(lines.length > 0 ? lines.join('\n') : 'no panes', { agents });
      }),
  );

  server.registerTool(
    'ask',
    {
      title: 'Ask another agent',
      description:
        'Ask the agent in another pane a question. The question is typed into its terminal once it is idle (asks to one agent wait in line), and its answer comes back. target: a pane id or title, or an agent name (claude, codex, gemini, opencode): the pane running that agent in your folder, or the only one. wait=false returns an ask_id at once and delivers the answer into your pane when you are idle.',
      inputSchema: {
        target: z.string().min(1).max(200).describe('A pane id or title, or an agent name.'),
        question: z.string().min(1).max(MAX_QUESTION_CHARS).describe('The question, as you would type it to that agent.'),
        wait: z.boolean().default(true).describe('Wait for the answer (default), or return at once with an ask_id.'),
        timeout_ms: z.number().int().min(1).max(MAX_ASK_TIMEOUT_MS).optional().describe(`Give up after this long (default ${DEFAULT_ASK_TIMEOUT_MS / 60_000} minutes), queue time included.`),
      },
    },
    (args) => guarded(async () => askResult(await backend.ask({ target: args.target, question: args.question, wait: args.wait, ...(args.timeout_ms !== undefined ? { timeout_ms: args.timeout_ms } : {}) }))),
  );

  server.registerTool(
    'ask_result',
    {
      title: 'Result of an ask',
      description: 'The state of an ask made with wait=false: its reply once done. wait_ms waits up to that long for it to finish.',
      inputSchema: {
        ask_id: z.string().regex(new RegExp(ASK_ID_SOURCE), ASK_ID_WORDS).describe('The ask_id ask returned.'),
        wait_ms: z.number().int().min(0).max(MCP_MAX_WAIT_MS).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    (args) => guarded(async () => askResult(await backend.askResult({ ask_id: args.ask_id, ...(args.wait_ms !== undefined ? { wait_ms: args.wait_ms } : {}) }))),
  );

  server.registerTool(
    'send',
    {
      title: 'Type into a pane',
      description: 'Type text into a pane, then Enter unless enter=false. Needs the send permission for that pane; prefer ask for agents.',
      inputSchema: {
        pane_id: paneId,
        text: z.string().min(1).max(MCP_MAX_TEXT_CHARS),
        enter: z.boolean().default(true),
      },
      annotations: { destructiveHint: true },
    },
    (args) =>
      guarded(async () => {
        const sent = await backend.send({ pane_id: args.pane_id, text: args.text, enter: args.enter });
        return ok(`sent to ${args.pane_id}`, { ...sent, pane_id: args.pane_id });
      }),
  );

  server.registerTool(
    'read',
    {
      title: 'Read a pane',
      description: 'The last lines of a pane: its screen and the history above it.',
      inputSchema: { pane_id: paneId, lines: z.number().int().min(1).max(MCP_MAX_READ_LINES).default(50) },
      annotations: { readOnlyHint: true },
    },
    (args) =>
      guarded(async () => {
        const read = await backend.read({ pane_id: args.pane_id, lines: args.lines });
        return ok(read.text, { ...read });
      }),
  );

  server.registerTool(
    'wait',
    {
      title: 'Wait for a pane',
      description: 'Wait until the agent in a pane is idle, or until a pattern (a regular expression) shows on its screen.',
      inputSchema: {
        pane_id: paneId,
        until: z.enum(['idle', 'pattern']).default('idle'),
        pattern: z.string().min(1).max(1_000).optional(),
        timeout_ms: z.number().int().min(1).max(MCP_MAX_WAIT_MS).default(60_000),
      },
      annotations: { readOnlyHint: true },
    },
    (args) =>
      guarded(async () => {
        if (args.until === 'pattern' && args.pattern === undefined) return failure(new SwitchboardError('INVALID_PARAMS', 'until=pattern needs a pattern'));
        const waited = await backend.wait({ pane_id: args.pane_id, until: args.until, timeout_ms: args.timeout_ms, ...(args.pattern !== undefined ? { pattern: args.pattern } : {}) });
        const text = waited.matched ? `${args.pane_id} ${args.until === 'idle' ? 'is idle' : `shows ${waited.match ?? args.pattern ?? ''}`}` : `${args.pane_id} did not get there in time (now ${waited.state})`;
        return ok(text, { ...waited, pane_id: args.pane_id });
      }),
  );

  return server;
}
