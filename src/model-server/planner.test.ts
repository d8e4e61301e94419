import { describe, expect, it } from 'vitest';
import { readConversation, type ConversationView } from './conversation.js';
import { exampleOf, plan, type Plan, type Reply } from './planner.js';
import { parseScenario, type Scenario } from './scenario.js';
import type { ToolCall } from './tools.js';

const CLAUDE_TOOLS = ['Bash', 'Write', 'Edit', 'Read', 'Glob'];
const CODEX_TOOLS = ['exec_command', 'write_stdin', 'apply_patch', 'web_search'];
const GEMINI_TOOLS = ['run_shell_command', 'write_file', 'replace', 'read_file'];
const OPENCODE_TOOLS = ['bash', 'edit', 'glob', 'grep', 'read', 'write'];

/** A conversation view with defaults; tests set only what they are about. */
function view(overrides: Partial<ConversationView> = {}): ConversationView {
  return { api: 'anthropic', tools: CLAUDE_TOOLS, namespaced: [], toolSearches: 0, prompt: '', stepsDone: 0, lastToolResult: '', cwd: undefined, text: '', jsonSchema: undefined, wantsJson: false, stream: false, model: undefined, ...overrides };
}

const scenario: Scenario = {
  name: 'planner',
  title: 'Planner title',
  rules: [
    { match: 'say hello', steps: [{ text: 'Hello there.' }] },
    {
      match: 'write a file',
      steps: [
        { text: 'Writing.', tool: 'shell', command: 'echo hi > f.txt', description: 'Write f.txt' },
        { text: 'Done: wrote f.txt.' },
      ],
    },
    { match: 'fail (now|later)', steps: [{ error: 429 }] },
    { match: 'slowly', steps: [{ text: 'Slow.', delay_ms: 50, chunk_chars: 3, chunk_delay_ms: 7 }] },
    { steps: [{ text: 'Fallback.' }] },
  ],
};

/** The text of a text reply; fails the test for any other kind. */
function textOf(reply: Reply): string {
  if (reply.kind !== 'text') throw new Error(`expected a text reply, got ${JSON.stringify(reply)}`);
  return reply.text;
}

/** The call of a tool reply; fails the test for any other kind. */
function callOf(p: Plan): ToolCall {
  if (p.reply.kind !== 'tool') throw new Error(`expected a tool reply, got ${JSON.stringify(p.reply)}`);
  return p.reply.call;
}

/** The call a one-step tool scenario makes for a client offering `tools`. */
function callFor(step: Scenario['rules'][number]['steps'][number], overrides: Partial<ConversationView>, fallbackCwd?: string): ToolCall {
  return callOf(plan({ name: 't', rules: [{ steps: [step] }] }, view(overrides), fallbackCwd));
}

describe('plan: choosing the rule', () => {
  it('takes the first rule whose pattern fits the prompt, ignoring case', () => {
    const p = plan(scenario, view({ prompt: 'Please SAY HELLO to me' }));
    expect(p).toMatchObject({ role: 'main', rule: 0, step: 0 });
    expect(textOf(p.reply)).toBe('Hello there.');
  });

  it('treats the pattern as a regular expression', () => {
    expect(plan(scenario, view({ prompt: 'fail later' })).rule).toBe(2);
  });

  it('lets a rule without a pattern answer any prompt', () => {
    const p = plan(scenario, view({ prompt: 'something unscripted' }));
    expect(p.rule).toBe(4);
    expect(textOf(p.reply)).toBe('Fallback.');
  });

  it('answers from the last rule when no pattern fits', () => {
    const strict: Scenario = { name: 's', rules: [{ match: '^alpha$', steps: [{ text: 'A' }] }, { match: '^beta$', steps: [{ text: 'B' }] }] };
    expect(textOf(plan(strict, view({ prompt: 'gamma' })).reply)).toBe('B');
  });

  // The log must tell "the last rule matched" from "nothing matched and the last rule stood in".
  it('reports no rule (null, not an index) when no pattern fits', () => {
    const strict: Scenario = { name: 's', rules: [{ match: '^alpha$', steps: [{ text: 'A' }] }, { match: '^beta$', steps: [{ text: 'B' }] }] };
    expect(plan(strict, view({ prompt: 'gamma' }))).toMatchObject({ role: 'main', rule: null, step: 0 });
    expect(plan(strict, view({ prompt: 'beta' })).rule).toBe(1);
  });

  // Rules match what the user typed; the context the CLI injects is stripped before planning.
  it('matches the prompt without its injected context', () => {
    const v = readConversation('anthropic', { tools: [{ name: 'Bash' }], messages: [{ role: 'user', content: '<system-reminder>say hello</system-reminder>\nplease write a file' }] });
    expect(plan(scenario, v).rule).toBe(1);
  });
});

describe('plan: choosing the step from the request, not from a counter', () => {
  it('answers the first step while no tool result has come back', () => {
    const p = plan(scenario, view({ prompt: 'write a file please' }));
    expect(p).toMatchObject({ role: 'main', rule: 1, step: 0 });
    expect(p.reply).toMatchObject({ kind: 'tool', text: 'Writing.' });
  });

  it('answers the next step once a tool result came back', () => {
    const p = plan(scenario, view({ prompt: 'write a file please', stepsDone: 1 }));
    expect(p).toMatchObject({ rule: 1, step: 1 });
    expect(textOf(p.reply)).toBe('Done: wrote f.txt.');
  });

  // A retry, a parallel session or a title request in between must not move the script on.
  it('answers the same request the same way however often it is asked', () => {
    const first = view({ prompt: 'write a file please' });
    const before = plan(scenario, first);
    plan(scenario, view({ tools: [], text: 'Generate a title' }));
    plan(scenario, view({ prompt: 'say hello' }));
    expect(plan(scenario, first)).toEqual(before);
    expect(plan(scenario, first)).toEqual(before);
  });

  it('says the last text again past the end of the script', () => {
    const p = plan(scenario, view({ prompt: 'write a file please', stepsDone: 7 }));
    expect(p.step).toBe(1);
    expect(textOf(p.reply)).toBe('Done: wrote f.txt.');
  });

  // Repeating a tool step would make the agent call the tool forever.
  it('answers with text, not a tool call, past the end of a script that ends in a tool step', () => {
    const toolLast: Scenario = { name: 't', rules: [{ match: 'with text', steps: [{ text: 'Listing.', tool: 'shell', command: 'ls' }] }, { steps: [{ tool: 'shell', command: 'ls' }] }] };
    expect(plan(toolLast, view({ prompt: 'with text' })).reply.kind).toBe('tool');
    expect(textOf(plan(toolLast, view({ prompt: 'with text', stepsDone: 1 })).reply)).toBe('Listing.');
    expect(textOf(plan(toolLast, view({ prompt: 'bare', stepsDone: 1 })).reply)).toBe('Done.');
  });
});

describe('plan: replies', () => {
  it('gives a text step the default timing', () => {
    expect(plan(scenario, view({ prompt: 'say hello' })).reply.timing).toEqual({ delayMs: 0, chunkChars: 24, chunkDelayMs: 0 });
  });

  it("carries the step's own timing", () => {
    expect(plan(scenario, view({ prompt: 'slowly' })).reply.timing).toEqual({ delayMs: 50, chunkChars: 3, chunkDelayMs: 7 });
  });

  it('answers an error step with its status and a default message', () => {
    expect(plan(scenario, view({ prompt: 'fail now' })).reply).toEqual({ kind: 'error', status: 429, message: 'Rate limit exceeded (scripted)', timing: { delayMs: 0, chunkChars: 24, chunkDelayMs: 0 } });
  });

  it.each<[500 | 429 | 529 | 503 | 400 | 401, string]>([
    [500, 'Internal server error (scripted)'],
    [429, 'Rate limit exceeded (scripted)'],
    [529, 'Overloaded (scripted)'],
    [503, 'Overloaded (scripted)'],
    [401, 'Invalid API key (scripted)'],
    [400, 'Bad request (scripted)'],
  ])('gives error %i the message %j by default', (status, message) => {
    expect(plan({ name: 'e', rules: [{ steps: [{ error: status }] }] }, view()).reply).toMatchObject({ kind: 'error', status, message });
  });

  it("uses an error step's own message", () => {
    expect(plan({ name: 'e', rules: [{ steps: [{ error: 500, message: 'boom' }] }] }, view()).reply).toMatchObject({ kind: 'error', status: 500, message: 'boom' });
  });

  it('keeps answering an error step when the request is retried', () => {
    const errorFirst: Scenario = { name: 'e', rules: [{ steps: [{ error: 529 }, { text: 'never reached' }] }] };
    expect(plan(errorFirst, view()).reply.kind).toBe('error');
    expect(plan(errorFirst, view()).reply.kind).toBe('error');
  });

  // Claude Code's read-only tools are enough to make it the main conversation, but it cannot run a shell.
  it('explains in text when the client offers no tool of the kind the step wants', () => {
    const p = plan(scenario, view({ prompt: 'write a file please', tools: ['Read', 'Glob', 'Grep'] }));
    expect(p.role).toBe('main');
    expect(textOf(p.reply)).toBe('(The scripted model wanted a shell tool, which this client does not offer.)');
  });
});

describe('plan: side requests', () => {
  // Claude Code's title request: no tools, and the wording asks for JSON.
  it('answers a title request that asks for JSON with {"title": …}', () => {
    const p = plan(scenario, view({ tools: [], prompt: 'say hello', text: 'Generate a concise, sentence-case title. Return JSON with a single "title" field.\nsay hello' }));
    expect(p).toMatchObject({ role: 'title', rule: -1, step: -1 });
    expect(JSON.parse(textOf(p.reply))).toEqual({ title: 'Planner title' });
  });

  // Codex's title request offers a single tool; OpenCode's none. Both want the bare title.
  it.each([[['request_user_input']], [[]]])('answers a plain title request (tools %j) with the bare title', (tools) => {
    const p = plan(scenario, view({ api: 'openai-responses', tools, prompt: 'write a file please', text: 'Generate a concise, single-line task title for this conversation.' }));
    expect(p.role).toBe('title');
    expect(textOf(p.reply)).toBe('Planner title');
  });

  it('uses a default title when the scenario has none', () => {
    const untitled: Scenario = { name: 'u', rules: [{ steps: [{ text: 'x' }] }] };
    expect(textOf(plan(untitled, view({ tools: [], text: 'Write a title' })).reply)).toBe('Scripted session');
  });

  // Gemini CLI's model router: the answer must fit the schema with the right types, or the CLI crashes.
  it('answers a structured request with a value that fits its schema', () => {
    const jsonSchema = { type: 'OBJECT', properties: { complexity_reasoning: { type: 'STRING' }, complexity_score: { type: 'INTEGER' } }, required: ['complexity_reasoning', 'complexity_score'] };
    const p = plan(scenario, view({ api: 'gemini', tools: [], prompt: 'write a file please', wantsJson: true, jsonSchema, text: 'classify the complexity' }));
    expect(p).toMatchObject({ role: 'structured', rule: -1, step: -1 });
    expect(p.reply).toMatchObject({ kind: 'json', value: { complexity_reasoning: 'scripted', complexity_score: 1 } });
  });

  it('prefers the structured answer when a structured request also mentions a title', () => {
    const p = plan(scenario, view({ tools: [], wantsJson: true, jsonSchema: { type: 'object', properties: { title: { type: 'string' } } }, text: 'Give this session a title' }));
    expect(p.role).toBe('structured');
    expect(p.reply).toMatchObject({ kind: 'json', value: { title: 'scripted' } });
  });

  // What makes a request the agent's own turn is that it offers the agent's tools.
  it.each([
    ['a shell tool', ['bash']],
    ['three or more tools', ['Read', 'Glob', 'Grep']],
  ])('follows the script for a request offering %s, even if it mentions a title or wants JSON', (_label, tools) => {
    const p = plan(scenario, view({ tools, prompt: 'say hello', text: 'Generate a title as JSON', wantsJson: true, jsonSchema: { type: 'object' } }));
    expect(p.role).toBe('main');
    expect(textOf(p.reply)).toBe('Hello there.');
  });

  it('follows the script for a tool-less request that is neither a title nor structured', () => {
    const p = plan(scenario, view({ tools: [], prompt: 'say hello', text: 'say hello' }));
    expect(p.role).toBe('main');
    expect(textOf(p.reply)).toBe('Hello there.');
  });

  // JSON mode without a schema (OpenAI json_object, Gemini application/json): the client parses the
  // answer, so plain text would break it.
  it.each<[string, ConversationView['api']]>([
    ['OpenAI Chat', 'openai-chat'],
    ['OpenAI Responses', 'openai-responses'],
    ['Gemini', 'gemini'],
  ])('answers a %s JSON-mode request without a schema with the scripted text as {"text": …}', (_label, api) => {
    const p = plan(scenario, view({ api, tools: [], prompt: 'say hello', wantsJson: true, text: 'Reply in JSON. say hello' }));
    expect(p).toMatchObject({ role: 'main', rule: 0, step: 0 });
    expect(p.reply).toEqual({ kind: 'json', value: { text: 'Hello there.' }, timing: { delayMs: 0, chunkChars: 24, chunkDelayMs: 0 } });
  });

  it('answers a JSON-mode title request with {"title": …} even when its wording does not say JSON', () => {
    const p = plan(scenario, view({ api: 'gemini', tools: [], prompt: 'say hello', wantsJson: true, text: 'Generate a title for this conversation' }));
    expect(p.role).toBe('title');
    expect(JSON.parse(textOf(p.reply))).toEqual({ title: 'Planner title' });
  });

  it('keeps a scripted error an error in JSON mode', () => {
    const p = plan(scenario, view({ api: 'openai-chat', tools: [], prompt: 'fail now', wantsJson: true, text: 'json please. fail now' }));
    expect(p.reply).toMatchObject({ kind: 'error', status: 429 });
  });

  it('answers a JSON-mode request read from a real Responses body with JSON text', () => {
    const v = readConversation('openai-responses', { input: 'say hello', text: { format: { type: 'json_object' } } });
    expect(plan(scenario, v).reply).toMatchObject({ kind: 'json', value: { text: 'Hello there.' } });
  });

  it('matches "title" as a word, not inside other words', () => {
    expect(plan(scenario, view({ tools: [], prompt: 'say hello', text: 'subtitles and entitlement' })).role).toBe('main');
  });
});

describe('plan: tool calls in the shape of each client', () => {
  const shell = { tool: 'shell' as const, command: 'echo hi > f.txt', description: 'Write f.txt' };

  it('Claude Code: Bash {command, description}', () => {
    expect(callFor(shell, { tools: CLAUDE_TOOLS })).toEqual({ kind: 'function', name: 'Bash', args: { command: 'echo hi > f.txt', description: 'Write f.txt' } });
  });

  it('Gemini CLI: run_shell_command {command, description}', () => {
    expect(callFor(shell, { tools: GEMINI_TOOLS })).toEqual({ kind: 'function', name: 'run_shell_command', args: { command: 'echo hi > f.txt', description: 'Write f.txt' } });
  });

  it('OpenCode: bash with a default description', () => {
    expect(callFor({ tool: 'shell', command: 'ls' }, { tools: OPENCODE_TOOLS })).toEqual({ kind: 'function', name: 'bash', args: { command: 'ls', description: 'Run a command' } });
  });

  it("Codex: exec_command {cmd, workdir} in the request's working directory", () => {
    expect(callFor(shell, { tools: CODEX_TOOLS, cwd: '/home/dev/work-codex' })).toEqual({ kind: 'function', name: 'exec_command', args: { cmd: 'echo hi > f.txt', workdir: '/home/dev/work-codex' } });
  });

  it('Codex: exec_command falls back to the server working directory, then "."', () => {
    expect(callFor(shell, { tools: CODEX_TOOLS }, '/srv/fallback')).toMatchObject({ args: { workdir: '/srv/fallback' } });
    expect(callFor(shell, { tools: CODEX_TOOLS })).toMatchObject({ args: { workdir: '.' } });
  });

  // Asking to leave the sandbox is what makes Codex show its approval prompt.
  it('Codex: an escalated command asks for escalation with the description as justification', () => {
    expect(callFor({ ...shell, escalate: true }, { tools: CODEX_TOOLS, cwd: '/w' })).toEqual({
      kind: 'function',
      name: 'exec_command',
      args: { cmd: 'echo hi > f.txt', workdir: '/w', sandbox_permissions: 'require_escalated', justification: 'Write f.txt' },
    });
    expect(callFor({ tool: 'shell', command: 'ls', escalate: true }, { tools: CODEX_TOOLS })).toMatchObject({ args: { justification: 'The scripted model wants to run this command.' } });
  });

  it('older Codex: shell {command: [bash, -lc, …], workdir}', () => {
    expect(callFor(shell, { tools: ['shell', 'apply_patch', 'view_image'], cwd: '/w' })).toEqual({ kind: 'function', name: 'shell', args: { command: ['bash', '-lc', 'echo hi > f.txt'], workdir: '/w' } });
  });

  const write = { tool: 'write' as const, path: 'notes.txt', content: 'one\ntwo\n' };

  it.each<[string, string[], string, Record<string, unknown>]>([
    ['Claude Code', CLAUDE_TOOLS, 'Write', { file_path: '/w/notes.txt', content: 'one\ntwo\n' }],
    ['Gemini CLI', GEMINI_TOOLS, 'write_file', { file_path: '/w/notes.txt', content: 'one\ntwo\n' }],
    ['OpenCode', OPENCODE_TOOLS, 'write', { filePath: '/w/notes.txt', content: 'one\ntwo\n' }],
  ])('%s: writes with %s, the path made absolute against the working directory', (_cli, tools, name, args) => {
    expect(callFor(write, { tools, cwd: '/w' })).toEqual({ kind: 'function', name, args });
  });

  it('resolves a relative path against the server working directory when the request names none', () => {
    expect(callFor(write, { tools: CLAUDE_TOOLS }, '/srv/fallback')).toMatchObject({ args: { file_path: '/srv/fallback/notes.txt' } });
  });

  it('keeps an absolute path, and a relative one when no working directory is known', () => {
    expect(callFor({ ...write, path: '/etc/abs.txt' }, { tools: CLAUDE_TOOLS, cwd: '/w' })).toMatchObject({ args: { file_path: '/etc/abs.txt' } });
    expect(callFor(write, { tools: CLAUDE_TOOLS })).toMatchObject({ args: { file_path: 'notes.txt' } });
  });

  // Codex writes files through its freeform apply_patch tool, whose input is a patch.
  it('Codex: writes with an apply_patch Add File patch', () => {
    expect(callFor(write, { tools: CODEX_TOOLS, cwd: '/w' })).toEqual({
      kind: 'custom',
      name: 'apply_patch',
      input: '*** Begin Patch\n*** Add File: notes.txt\n+one\n+two\n*** End Patch\n',
    });
  });

  const edit = { tool: 'edit' as const, path: 'notes.txt', old: 'one', new: 'uno' };

  it.each<[string, string[], string, Record<string, unknown>]>([
    ['Claude Code', CLAUDE_TOOLS, 'Edit', { file_path: '/w/notes.txt', old_string: 'one', new_string: 'uno' }],
    ['Gemini CLI', GEMINI_TOOLS, 'replace', { file_path: '/w/notes.txt', old_string: 'one', new_string: 'uno', instruction: 'Apply the scripted edit' }],
    ['OpenCode', OPENCODE_TOOLS, 'edit', { filePath: '/w/notes.txt', oldString: 'one', newString: 'uno' }],
  ])('%s: edits with %s', (_cli, tools, name, args) => {
    expect(callFor(edit, { tools, cwd: '/w' })).toEqual({ kind: 'function', name, args });
  });

  it('Codex: edits with an apply_patch Update File patch', () => {
    expect(callFor({ ...edit, old: 'one\ntwo\n', new: 'uno' }, { tools: CODEX_TOOLS })).toEqual({
      kind: 'custom',
      name: 'apply_patch',
      input: '*** Begin Patch\n*** Update File: notes.txt\n@@\n-one\n-two\n+uno\n*** End Patch\n',
    });
  });

  it('explains in text when the client can neither write nor patch', () => {
    const p = plan({ name: 't', rules: [{ steps: [{ ...write, text: 'ignored' }] }] }, view({ tools: ['Read', 'Glob', 'Bash'] }));
    expect(textOf(p.reply)).toBe('(The scripted model wanted a write tool, which this client does not offer.)');
  });
});

describe('plan on real request bodies', () => {
  const writeScenario: Scenario = { name: 'w', rules: [{ match: 'write a file', steps: [{ tool: 'shell', command: 'echo hi > f.txt' }, { text: 'Done.' }] }] };

  // The whole Codex turn: the call, then the answer once the call's output is in the request.
  it('Codex: a shell call in the environment context directory, then the final text', () => {
    const input: unknown[] = [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>\n<cwd>/home/dev/work-codex</cwd>\n</environment_context>' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'write a file please' }] },
    ];
    const body = { model: 'gpt-5.5', stream: true, input, tools: [{ type: 'function', name: 'exec_command' }, { type: 'custom', name: 'apply_patch' }] };
    expect(callOf(plan(writeScenario, readConversation('openai-responses', body)))).toEqual({ kind: 'function', name: 'exec_command', args: { cmd: 'echo hi > f.txt', workdir: '/home/dev/work-codex' } });
    input.push({ type: 'function_call', name: 'exec_command', call_id: 'c1', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: 'ok' });
    expect(textOf(plan(writeScenario, readConversation('openai-responses', body)).reply)).toBe('Done.');
  });

  it('Gemini CLI: a run_shell_command call, then the final text', () => {
    const contents: unknown[] = [{ role: 'user', parts: [{ text: 'write a file please' }] }];
    const body = { contents, tools: [{ functionDeclarations: [{ name: 'run_shell_command' }, { name: 'write_file' }] }] };
    expect(callOf(plan(writeScenario, readConversation('gemini', body, { stream: true })))).toMatchObject({ name: 'run_shell_command' });
    contents.push({ role: 'model', parts: [{ functionCall: { name: 'run_shell_command', args: {} } }] }, { role: 'user', parts: [{ functionResponse: { name: 'run_shell_command', response: {} } }] });
    expect(textOf(plan(writeScenario, readConversation('gemini', body, { stream: true })).reply)).toBe('Done.');
  });
});

describe('exampleOf', () => {
  it('fills an object schema by property type', () => {
    const schema = {
      type: 'object',
      properties: { s: { type: 'string' }, i: { type: 'integer' }, n: { type: 'number' }, b: { type: 'boolean' }, a: { type: 'array', items: { type: 'string' } }, o: { type: 'object', properties: { deep: { type: 'string' } } } },
    };
    expect(exampleOf(schema)).toEqual({ s: 'scripted', i: 1, n: 1, b: true, a: [], o: { deep: 'scripted' } });
  });

  it("reads Gemini's upper-case type names", () => {
    expect(exampleOf({ type: 'OBJECT', properties: { r: { type: 'STRING' }, score: { type: 'INTEGER' }, ok: { type: 'BOOLEAN' } } })).toEqual({ r: 'scripted', score: 1, ok: true });
  });

  it('picks the first value of an enum', () => {
    expect(exampleOf({ type: 'string', enum: ['flash', 'pro'] })).toBe('flash');
  });

  it('treats a schema with properties but no type as an object', () => {
    expect(exampleOf({ properties: { x: { type: 'number' } } })).toEqual({ x: 1 });
  });

  it('answers a string for a schema without a type, and {} for no schema at all', () => {
    expect(exampleOf({})).toBe('scripted');
    expect(exampleOf(undefined)).toEqual({});
    expect(exampleOf(null)).toEqual({});
    expect(exampleOf('string')).toEqual({});
  });
});

describe('plan: MCP tool steps and the last tool result', () => {
  const mcpScenario: Scenario = {
    name: 'mcp',
    rules: [{ match: 'consult codex', steps: [{ tool: 'mcp', server: 'switchboard', name: 'ask', input: { target: 'codex', question: 'Why?' } }, { text: 'Codex says: {{tool_result}}' }] }],
  };

  it('calls the MCP tool by the name each CLI gives it', () => {
    for (const [tool, tools] of [
      ['mcp__switchboard__ask', [...CLAUDE_TOOLS, 'mcp__switchboard__ask']],
      ['switchboard_ask', [...OPENCODE_TOOLS, 'switchboard_ask']],
      // Gemini CLI 0.61, as seen live; the longer name of another tool of the server is not taken for it.
      ['mcp_switchboard_ask', [...GEMINI_TOOLS, 'mcp_switchboard_ask_result', 'mcp_switchboard_ask']],
    ] as const) {
      const reply = plan(mcpScenario, view({ prompt: 'please consult codex', tools: [...tools] })).reply;
      expect(reply).toMatchObject({ kind: 'tool', call: { kind: 'function', name: tool, args: { target: 'codex', question: 'Why?' } } });
    }
    expect(plan(mcpScenario, view({ prompt: 'please consult codex' })).reply).toMatchObject({ kind: 'text', text: expect.stringContaining('wanted a mcp tool') as unknown });
  });

  // Codex 0.169.0 as seen live: `tools` holds tool_search (a tool of type tool_search, no name)
  // and no MCP tool; its tool_search_output holds the server's tools in the namespace mcp__switchboard.
  describe('through a tool search when the tool is deferred (Codex)', () => {
    const prompt = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'please consult codex' }] };
    const search = { type: 'tool_search_call', call_id: 'call_s', execution: 'client', status: 'completed', arguments: { query: 'switchboard ask', limit: 8 } };
    const askTool = { type: 'function', name: 'ask', defer_loading: true, parameters: { type: 'object', properties: {} } };
    const found = (tools: unknown[]): Record<string, unknown> => ({ type: 'tool_search_output', call_id: 'call_s', execution: 'client', status: 'completed', tools });
    const codexTools = [...CODEX_TOOLS.map((name) => ({ type: 'function', name })), { type: 'tool_search', execution: 'client', parameters: {} }];
    const at = (input: unknown[], tools: unknown[] = codexTools): Plan => plan(mcpScenario, readConversation('openai-responses', { input, tools }));

    it('searches first, with no words of its own', () => {
      expect(at([prompt]).reply).toMatchObject({ kind: 'tool', text: undefined, call: { kind: 'tool_search', args: { query: 'switchboard ask' } } });
      expect(at([prompt]).step).toBe(0);
    });

    it('then calls the tool in the namespace the search loaded, as the same step', () => {
      const next = at([prompt, search, found([{ type: 'namespace', name: 'mcp__switchboard', description: 'Tools in the mcp__switchboard namespace.', tools: [{ type: 'function', name: 'list_agents' }, askTool] }])]);
      expect(next.step).toBe(0);
      expect(next.reply).toMatchObject({ kind: 'tool', call: { kind: 'function', name: 'ask', namespace: 'mcp__switchboard', args: { target: 'codex', question: 'Why?' } } });
    });

    it("finds the tool whatever the namespace's spelling, or flat under its full name", () => {
      for (const ns of ['mcp__switchboard__', 'mcp__switchboard']) {
        expect(at([prompt, search, found([{ type: 'namespace', name: ns, tools: [askTool] }])]).reply).toMatchObject({ call: { name: 'ask', namespace: ns } });
      }
      const flat = at([prompt, search, found([{ ...askTool, name: 'mcp__switchboard__ask' }])]).reply;
      expect(flat).toMatchObject({ call: { kind: 'function', name: 'mcp__switchboard__ask' } });
      expect(flat.kind === 'tool' && flat.call.kind === 'function' ? flat.call.namespace : 'none').toBeUndefined();
    });

    it("does not take another server's tool of the same name", () => {
      expect(at([prompt, search, found([{ type: 'namespace', name: 'mcp__other', tools: [askTool] }])]).reply).toMatchObject({ kind: 'text', text: expect.stringContaining('wanted a mcp tool') as unknown });
    });

    it('calls a namespaced tool offered up front without searching', () => {
      const tools = [...codexTools, { type: 'namespace', name: 'mcp__switchboard__', tools: [askTool] }];
      expect(at([prompt], tools).reply).toMatchObject({ kind: 'tool', call: { kind: 'function', name: 'ask', namespace: 'mcp__switchboard__' } });
    });

    it('searches once a step: a search that found nothing ends in words, not another search', () => {
      expect(at([prompt, search, found([])]).reply).toMatchObject({ kind: 'text', text: expect.stringContaining('does not offer') as unknown });
    });

    it('searches again for the next step\'s tool when the first search did not load it', () => {
      const call = { type: 'function_call', call_id: 'call_a', name: 'ask', namespace: 'mcp__switchboard', arguments: '{}' };
      const twoSteps = { name: 'two', rules: [{ match: 'consult twice', steps: [{ tool: 'mcp' as const, name: 'ask', input: {} }, { tool: 'mcp' as const, name: 'read', input: {} }, { text: 'done' }] }] };
      const input = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'please consult twice' }] }, search, found([{ type: 'namespace', name: 'mcp__switchboard', tools: [askTool] }]), call, { type: 'function_call_output', call_id: 'call_a', output: 'ok' }];
      expect(plan(parseScenario(twoSteps), readConversation('openai-responses', { input, tools: codexTools })).reply).toMatchObject({ kind: 'tool', call: { kind: 'tool_search' } });
    });

    it("counts the tool's result, not the search, as the step done, and carries it into the text", () => {
      const call = { type: 'function_call', call_id: 'call_a', name: 'ask', namespace: 'mcp__switchboard', arguments: '{}' };
      const input = [prompt, search, found([{ type: 'namespace', name: 'mcp__switchboard', tools: [askTool] }]), call, { type: 'function_call_output', call_id: 'call_a', output: 'Because it is.' }];
      const read = readConversation('openai-responses', { input, tools: codexTools });
      expect(read).toMatchObject({ stepsDone: 1, toolSearches: 1, lastToolResult: 'Because it is.' });
      expect(plan(mcpScenario, read).reply).toMatchObject({ kind: 'text', text: 'Codex says: Because it is.' });
    });

    it('does not search where the API has no tool search (a function named tool_search is not one)', () => {
      expect(plan(mcpScenario, view({ prompt: 'please consult codex', tools: [...CLAUDE_TOOLS, 'tool_search'] })).reply).toMatchObject({ kind: 'text' });
    });

    it('searches again at the next prompt', () => {
      const later = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'please consult codex again' }] };
      const input = [prompt, search, found([{ type: 'namespace', name: 'mcp__switchboard', tools: [askTool] }]), later];
      expect(at(input).reply).toMatchObject({ kind: 'tool', call: { kind: 'tool_search' } });
    });
  });

  it("puts the last tool result's text where the script says {{tool_result}}", () => {
    const body = {
      messages: [
        { role: 'user', content: 'please consult codex' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'mcp__switchboard__ask', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'Because it is.' }] }] },
      ],
      tools: CLAUDE_TOOLS.map((name) => ({ name })),
    };
    const read = readConversation('anthropic', body);
    expect(read).toMatchObject({ stepsDone: 1, lastToolResult: 'Because it is.' });
    expect(plan(mcpScenario, read).reply).toMatchObject({ kind: 'text', text: 'Codex says: Because it is.' });
  });
});

describe('a text step with vars', () => {
  const withVars = parseScenario({
    name: 'vars',
    rules: [{ match: 'result', steps: [{ text: 'call {"nonce":"{{nonce}}","missing":"{{gone}}"}', vars: { nonce: 'Your nonce is ([0-9a-f]+)', gone: 'never (here)' } }] }],
  });

  it('fills each name with its pattern\'s first group, from the whole request', () => {
    const reply = plan(withVars, view({ prompt: 'the result', text: 'brief: Your nonce is 0af3.\nthe result' })).reply;
    expect(textOf(reply)).toBe('call {"nonce":"0af3","missing":""}');
  });

  it('refuses a pattern that is no regular expression, naming the step', () => {
    expect(() => parseScenario({ name: 'bad', rules: [{ steps: [{ text: 'x', vars: { a: '(' } }] }] })).toThrow(/not a valid regular expression/);
  });
});
