import { describe, expect, it } from 'vitest';
import { readConversation, type Api } from './conversation.js';

// Request bodies below follow what the real CLIs send (see shared/reference/real-clis.md): the
// context each CLI wraps around the user's words, tool results, and side requests.

describe('readConversation: Anthropic Messages (Claude Code)', () => {
  it('takes text sent beside a refused tool result as the next prompt', () => {
    const view = readConversation('anthropic', {
      messages: [
        { role: 'user', content: 'clean up everything' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'rm -rf ~' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', is_error: true, content: 'The user doesn\'t want to proceed with this tool use.' },
            { type: 'text', text: '<system-reminder>context</system-reminder>' },
            { type: 'text', text: 'fail now please' },
          ],
        },
      ],
    });
    expect(view.prompt).toBe('fail now please');
    expect(view.stepsDone).toBe(0);
  });

  it('continues the turn when only context travels beside a tool result', () => {
    const view = readConversation('anthropic', {
      messages: [
        { role: 'user', content: 'write a file' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'echo' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }, { type: 'text', text: '<system-reminder>context</system-reminder>' }] },
      ],
    });
    expect(view.prompt).toBe('write a file');
    expect(view.stepsDone).toBe(1);
  });

  it('continues the turn past a tool search: the "Tool loaded." beside the loaded tools is not a prompt', () => {
    // Claude Code 2.1.332 answering its ToolSearch: the tools as tool_reference blocks, and a text.
    const view = readConversation('anthropic', {
      messages: [
        { role: 'user', content: 'look around please' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'ToolSearch', input: { query: 'select:WebFetch' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'tool_reference', tool_name: 'WebFetch' }] }, { type: 'text', text: 'Tool loaded.' }] },
      ],
    });
    expect(view.prompt).toBe('look around please');
    expect(view.stepsDone).toBe(1);
  });

  const tools = [{ name: 'Bash', input_schema: {} }, { name: 'Write', input_schema: {} }, { name: 'Edit', input_schema: {} }, { name: 'Read', input_schema: {} }];
  const system = [{ type: 'text', text: 'You are Claude Code.\n<env>\nWorking directory: /home/dev/work-claude\nPlatform: linux\n</env>' }];

  it('reads the prompt from text blocks with the system reminders stripped', () => {
    const view = readConversation('anthropic', {
      model: 'claude-sonnet-4-5',
      stream: true,
      system,
      tools,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>\nAs you answer the user, use this context.\n</system-reminder>' },
            { type: 'text', text: 'say hello please' },
            { type: 'text', text: '<system-reminder>Todo list is empty.</system-reminder>' },
          ],
        },
      ],
    });
    expect(view).toMatchObject({ api: 'anthropic', prompt: 'say hello please', stepsDone: 0, tools: ['Bash', 'Write', 'Edit', 'Read'], stream: true, model: 'claude-sonnet-4-5', cwd: '/home/dev/work-claude', wantsJson: false });
    expect(view.jsonSchema).toBeUndefined();
  });

  it('reads a prompt given as a plain string', () => {
    expect(readConversation('anthropic', { messages: [{ role: 'user', content: 'plain words' }] }).prompt).toBe('plain words');
  });

  it('counts tool results after the prompt, skipping assistant turns', () => {
    const view = readConversation('anthropic', {
      tools,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'write a file please' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'Write', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'ok' }, { type: 'text', text: '<system-reminder>x</system-reminder>' }] },
      ],
    });
    expect(view.prompt).toBe('write a file please');
    expect(view.stepsDone).toBe(2);
  });

  // Tool results that belong to an earlier prompt must not shift the script of the new one.
  it('starts counting again at a new prompt', () => {
    const view = readConversation('anthropic', {
      messages: [
        { role: 'user', content: 'first task' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
        { role: 'user', content: 'second task' },
      ],
    });
    expect(view.prompt).toBe('second task');
    expect(view.stepsDone).toBe(0);
  });

  // Claude Code's "mid-conversation system" beta can end the list with a system message.
  it('looks past a trailing system message to the last user message', () => {
    const view = readConversation('anthropic', {
      messages: [
        { role: 'user', content: 'do it' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Bash', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }] },
        { role: 'system', content: 'The user changed the permission mode.' },
      ],
    });
    expect(view.prompt).toBe('do it');
    expect(view.stepsDone).toBe(1);
  });

  it('has no prompt, tools or model when the body carries none', () => {
    const view = readConversation('anthropic', { messages: [] });
    expect(view).toMatchObject({ prompt: '', stepsDone: 0, tools: [], stream: false, model: undefined, cwd: undefined });
  });

  // Claude Code's title request has no tools and asks for JSON in its wording, not in a field.
  it('never reports wantsJson (the Messages API has no JSON mode)', () => {
    const view = readConversation('anthropic', {
      system: [{ type: 'text', text: 'Generate a concise, sentence-case title. Return JSON with a single "title" field.' }],
      messages: [{ role: 'user', content: 'say hello please' }],
    });
    expect(view.wantsJson).toBe(false);
    expect(view.tools).toEqual([]);
    expect(view.text).toContain('Return JSON with a single "title" field');
  });
});

describe('readConversation: OpenAI Responses (Codex)', () => {
  const tools = [
    { type: 'function', name: 'exec_command', parameters: {} },
    { type: 'function', name: 'write_stdin', parameters: {} },
    { type: 'custom', name: 'apply_patch', format: { type: 'grammar' } },
    { type: 'web_search' },
  ];
  const context = [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions instructions>sandbox</permissions instructions>' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<user_instructions>\nBe brief.\n</user_instructions>' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>\n  <cwd>/home/dev/work-codex</cwd>\n  <shell>bash</shell>\n</environment_context>' }] },
  ];

  it('skips the context messages Codex sends as user messages', () => {
    const view = readConversation('openai-responses', {
      model: 'gpt-5.5',
      stream: true,
      instructions: 'You are Codex.',
      input: [...context, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'say hello please' }] }],
      tools,
    });
    expect(view).toMatchObject({ api: 'openai-responses', prompt: 'say hello please', stepsDone: 0, stream: true, model: 'gpt-5.5', cwd: '/home/dev/work-codex', wantsJson: false });
  });

  // Codex can send a fresh environment context after the prompt; it is not the prompt.
  it('skips a context message that comes after the prompt', () => {
    const view = readConversation('openai-responses', {
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'the real prompt' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: '  <environment_context>\n<cwd>/x</cwd>\n</environment_context>' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<turn_context model="gpt-5.5"/>' }] },
      ],
    });
    expect(view.prompt).toBe('the real prompt');
  });

  it('names offered tools by name, or by type for built-in tools', () => {
    expect(readConversation('openai-responses', { input: [], tools }).tools).toEqual(['exec_command', 'write_stdin', 'apply_patch', 'web_search']);
  });

  it('counts function and custom tool outputs after the prompt', () => {
    const view = readConversation('openai-responses', {
      tools,
      input: [
        ...context,
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'write a file please' }] },
        { type: 'reasoning', summary: [], encrypted_content: 'opaque' },
        { type: 'function_call', name: 'exec_command', arguments: '{"cmd":"ls"}', call_id: 'call_1' },
        { type: 'function_call_output', call_id: 'call_1', output: 'Process exited with code 0' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Now the patch.' }] },
        { type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch', call_id: 'call_2' },
        { type: 'custom_tool_call_output', call_id: 'call_2', output: 'Success' },
      ],
    });
    expect(view.prompt).toBe('write a file please');
    expect(view.stepsDone).toBe(2);
  });

  it('reads a string input as the prompt', () => {
    expect(readConversation('openai-responses', { input: 'hello as a string' }).prompt).toBe('hello as a string');
  });

  // The API also accepts "easy" input messages that have a role but no type.
  it('reads a user message item that has no type', () => {
    expect(readConversation('openai-responses', { input: [{ role: 'user', content: 'typeless' }] }).prompt).toBe('typeless');
  });

  it('reports a json_schema text format as a JSON request with its schema', () => {
    const schema = { type: 'object', properties: { title: { type: 'string' } } };
    const view = readConversation('openai-responses', { input: 'name it', text: { format: { type: 'json_schema', name: 'title', schema } } });
    expect(view.wantsJson).toBe(true);
    expect(view.jsonSchema).toEqual(schema);
  });

  it('does not report a plain text format as a JSON request', () => {
    expect(readConversation('openai-responses', { input: 'x', text: { format: { type: 'text' } } }).wantsJson).toBe(false);
  });

  it('reports a json_object text format as a JSON request without a schema', () => {
    const view = readConversation('openai-responses', { input: 'x', text: { format: { type: 'json_object' } } });
    expect(view.wantsJson).toBe(true);
    expect(view.jsonSchema).toBeUndefined();
  });
});

describe('readConversation: OpenAI Responses tool search (Codex 0.169.0, shapes as seen live)', () => {
  const ask = { type: 'function', name: 'ask', strict: false, defer_loading: true, parameters: { type: 'object', properties: {} } };
  const searched = {
    type: 'tool_search_output',
    call_id: 'call_s',
    status: 'completed',
    execution: 'client',
    tools: [{ type: 'namespace', name: 'mcp__switchboard', description: 'Tools in the mcp__switchboard namespace.', tools: [{ ...ask, name: 'list_agents' }, ask] }],
  };
  const prompt = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'consult gemini' }] };
  const search = { type: 'tool_search_call', call_id: 'call_s', execution: 'client', status: 'completed', arguments: { query: 'switchboard ask', limit: 8 } };

  it('names the tool search among the tools by its type, and nothing namespaced before a search', () => {
    const view = readConversation('openai-responses', { input: [prompt], tools: [{ type: 'function', name: 'exec_command' }, { type: 'tool_search', execution: 'client' }] });
    expect(view).toMatchObject({ tools: ['exec_command', 'tool_search'], namespaced: [], toolSearches: 0, stepsDone: 0 });
  });

  it("reads the tools a search loaded since the prompt, with their namespace, and does not count the search as a step", () => {
    const view = readConversation('openai-responses', { input: [prompt, search, searched] });
    expect(view).toMatchObject({ prompt: 'consult gemini', toolSearches: 1, stepsDone: 0, lastToolResult: '' });
    expect(view.namespaced).toEqual([
      { namespace: 'mcp__switchboard', name: 'list_agents' },
      { namespace: 'mcp__switchboard', name: 'ask' },
    ]);
  });

  it('forgets the searches of earlier prompts', () => {
    const view = readConversation('openai-responses', { input: [prompt, search, searched, { ...prompt, content: [{ type: 'input_text', text: 'again' }] }] });
    expect(view).toMatchObject({ prompt: 'again', toolSearches: 0, namespaced: [] });
  });

  it("reads a namespace offered in the request's tools, and leaves plain functions to `tools`", () => {
    const view = readConversation('openai-responses', { input: [prompt], tools: [{ type: 'function', name: 'exec_command' }, { type: 'namespace', name: 'mcp__switchboard__', tools: [ask] }] });
    expect(view.namespaced).toEqual([{ namespace: 'mcp__switchboard__', name: 'ask' }]);
    expect(view.tools).toEqual(['exec_command', 'mcp__switchboard__']);
  });
});

describe('readConversation: OpenAI Chat Completions (OpenCode)', () => {
  const tools = ['bash', 'edit', 'glob', 'grep', 'read', 'write'].map((name) => ({ type: 'function', function: { name, parameters: {} } }));
  const system = { role: 'system', content: 'You are opencode.\n<env>\n  Working directory: /home/dev/work-opencode\n</env>' };

  it('reads the prompt, tools, stream flag, model and working directory', () => {
    const view = readConversation('openai-chat', {
      model: 'fake-model',
      stream: true,
      stream_options: { include_usage: true },
      messages: [system, { role: 'user', content: [{ type: 'text', text: 'say hello please' }] }],
      tools,
    });
    expect(view).toMatchObject({ api: 'openai-chat', prompt: 'say hello please', stepsDone: 0, tools: ['bash', 'edit', 'glob', 'grep', 'read', 'write'], stream: true, model: 'fake-model', cwd: '/home/dev/work-opencode' });
  });

  it('counts assistant tool-call turns after the prompt', () => {
    const view = readConversation('openai-chat', {
      tools,
      messages: [
        system,
        { role: 'user', content: 'write a file please' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'write', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_2', content: 'ok' },
      ],
    });
    expect(view.prompt).toBe('write a file please');
    expect(view.stepsDone).toBe(2);
  });

  // A plain assistant answer is not a tool step.
  it('does not count assistant turns without tool calls', () => {
    const view = readConversation('openai-chat', {
      messages: [
        { role: 'user', content: 'earlier' },
        { role: 'assistant', content: 'answer', tool_calls: [] },
        { role: 'user', content: 'now' },
        { role: 'assistant', content: 'thinking aloud' },
      ],
    });
    expect(view.prompt).toBe('now');
    expect(view.stepsDone).toBe(0);
  });

  it('reports json_object and json_schema response formats as JSON requests', () => {
    const plain = readConversation('openai-chat', { messages: [], response_format: { type: 'json_object' } });
    expect(plain.wantsJson).toBe(true);
    expect(plain.jsonSchema).toBeUndefined();
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } } };
    const withSchema = readConversation('openai-chat', { messages: [], response_format: { type: 'json_schema', json_schema: { name: 'r', schema } } });
    expect(withSchema.wantsJson).toBe(true);
    expect(withSchema.jsonSchema).toEqual(schema);
  });

  it('does not report a text response format as a JSON request', () => {
    expect(readConversation('openai-chat', { messages: [], response_format: { type: 'text' } }).wantsJson).toBe(false);
  });

  it('ignores tools that are not function tools', () => {
    expect(readConversation('openai-chat', { messages: [], tools: [{ type: 'function', function: { name: 'bash' } }, { type: 'web_search' }, 'junk'] }).tools).toEqual(['bash']);
  });
});

describe('readConversation: Gemini generateContent (Gemini CLI)', () => {
  const tools = [{ functionDeclarations: [{ name: 'run_shell_command' }, { name: 'write_file' }, { name: 'replace' }, { name: 'read_file' }] }];
  const sessionContext = {
    role: 'user',
    parts: [{ text: "<session_context>\nThis is the Gemini CLI. I'm currently working in the directory: /home/dev/work-gemini\n</session_context>" }],
  };

  it('reads the prompt after the session context, and takes stream and model from the URL', () => {
    const view = readConversation('gemini', { contents: [sessionContext, { role: 'user', parts: [{ text: 'say hello please' }] }], tools, stream: false }, { stream: true, model: 'gemini-2.5-flash' });
    expect(view).toMatchObject({ api: 'gemini', prompt: 'say hello please', stepsDone: 0, tools: ['run_shell_command', 'write_file', 'replace', 'read_file'], stream: true, model: 'gemini-2.5-flash', cwd: '/home/dev/work-gemini' });
  });

  it('strips a session context block in the same content as the prompt', () => {
    const view = readConversation('gemini', { contents: [{ role: 'user', parts: [...sessionContext.parts, { text: 'the words' }] }] });
    expect(view.prompt).toBe('the words');
  });

  it('counts function responses after the prompt, skipping model turns', () => {
    const view = readConversation('gemini', {
      tools,
      contents: [
        sessionContext,
        { role: 'user', parts: [{ text: 'write a file please' }] },
        { role: 'model', parts: [{ functionCall: { name: 'run_shell_command', args: { command: 'ls' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'run_shell_command', response: { output: 'ok' } } }] },
      ],
    });
    expect(view.prompt).toBe('write a file please');
    expect(view.stepsDone).toBe(1);
    expect(view.lastToolResult).toBe('ok');
  });

  // Gemini CLI 0.61 as seen live: an MCP tool's text in `output`, framed as untrusted context.
  it("reads the last tool result without Gemini's untrusted-context framing", () => {
    const view = readConversation('gemini', {
      contents: [
        { role: 'user', parts: [{ text: 'please consult opencode' }] },
        { role: 'model', parts: [{ functionCall: { name: 'mcp_switchboard_ask', args: { target: 'opencode' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'mcp_switchboard_ask', response: { output: '<untrusted_context>\nVenus is the hottest planet.\n</untrusted_context>' }, id: 'mcp_switchboard_ask_1' } }] },
      ],
    });
    expect(view).toMatchObject({ prompt: 'please consult opencode', stepsDone: 1, lastToolResult: 'Venus is the hottest planet.' });
    const failed = readConversation('gemini', { contents: [{ role: 'user', parts: [{ text: 'go' }] }, { role: 'user', parts: [{ functionResponse: { name: 'x', response: { error: 'it failed' } } }] }] });
    expect(failed.lastToolResult).toBe('it failed');
  });

  // The role is optional in the API; a content without one is the user's.
  it('treats a content without a role as the user', () => {
    expect(readConversation('gemini', { contents: [{ parts: [{ text: 'no role' }] }] }).prompt).toBe('no role');
  });

  // Gemini CLI's model router asks for JSON that fits a schema.
  it('reports the router request as a JSON request with its schema', () => {
    const schema = { type: 'OBJECT', properties: { complexity_reasoning: { type: 'STRING' }, complexity_score: { type: 'INTEGER' } } };
    const view = readConversation('gemini', { contents: [{ role: 'user', parts: [{ text: 'classify' }] }], generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } });
    expect(view.wantsJson).toBe(true);
    expect(view.jsonSchema).toEqual(schema);
  });

  it('falls back to the older responseSchema field', () => {
    const schema = { type: 'STRING' };
    expect(readConversation('gemini', { contents: [], generationConfig: { responseMimeType: 'application/json', responseSchema: schema } }).jsonSchema).toEqual(schema);
  });

  it('does not report a text answer as a JSON request', () => {
    expect(readConversation('gemini', { contents: [], generationConfig: { responseMimeType: 'text/plain' } }).wantsJson).toBe(false);
  });

  it('is not streaming unless the URL says so', () => {
    expect(readConversation('gemini', { contents: [] }).stream).toBe(false);
  });
});

describe('readConversation on any API', () => {
  const apis: Api[] = ['anthropic', 'openai-responses', 'openai-chat', 'gemini'];

  // A body that is not a JSON object (a malformed request) reads as an empty conversation.
  it.each(apis)('%s: reads a non-object body as an empty conversation', (api) => {
    for (const body of ['not json', null, [1, 2], 42]) {
      expect(readConversation(api, body)).toEqual({ api, tools: [], namespaced: [], toolSearches: 0, prompt: '', stepsDone: 0, lastToolResult: '', cwd: undefined, text: '', jsonSchema: undefined, wantsJson: false, stream: false, model: undefined });
    }
  });

  it('lets the caller override stream and model', () => {
    const view = readConversation('openai-chat', { stream: true, model: 'body-model', messages: [] }, { stream: false, model: 'url-model' });
    expect(view.stream).toBe(false);
    expect(view.model).toBe('url-model');
  });

  it('collects every string in the request into text, system prompt and tool definitions included', () => {
    const view = readConversation('anthropic', { system: 'SYSTEM-WORDS', tools: [{ name: 'Bash', description: 'TOOL-WORDS' }], messages: [{ role: 'user', content: 'USER-WORDS' }] });
    for (const words of ['SYSTEM-WORDS', 'TOOL-WORDS', 'USER-WORDS', 'Bash']) expect(view.text).toContain(words);
  });

  it('strips every kind of injected context block from the prompt, however long', () => {
    const prompt = [
      '<system-reminder>one</system-reminder>',
      '<session_context>\ntwo\n</session_context>',
      'keep these words',
      '<environment_context><cwd>/x</cwd></environment_context>',
      `<user_instructions>${'long '.repeat(1000)}</user_instructions>`,
    ].join('\n');
    expect(readConversation('anthropic', { messages: [{ role: 'user', content: prompt }] }).prompt).toBe('keep these words');
  });

  // Only complete blocks are context; a user who types a tag name keeps their words.
  it('leaves an unclosed tag and other tags in the prompt', () => {
    const view = readConversation('openai-chat', { messages: [{ role: 'user', content: 'explain <system-reminder> tags and <div>html</div>' }] });
    expect(view.prompt).toBe('explain <system-reminder> tags and <div>html</div>');
  });

  describe('working directory', () => {
    const cwdOf = (text: string): string | undefined => readConversation('openai-chat', { messages: [{ role: 'system', content: text }] }).cwd;

    it.each<[string, string]>([
      ['<cwd>/home/dev/codex</cwd>', '/home/dev/codex'],
      ['Working directory: /home/dev/claude', '/home/dev/claude'],
      ["I'm currently working in the directory: /home/dev/gemini", '/home/dev/gemini'],
      ['The current working directory is /srv/app', '/srv/app'],
      ['Working directory: C:\\Users\\dev\\proj', 'C:\\Users\\dev\\proj'],
    ])('finds it in %j', (text, cwd) => {
      expect(cwdOf(text)).toBe(cwd);
    });

    // The patterns are tried in order over the whole request, so the position in the text does not matter.
    it.each<[string, string]>([
      ['a loose mention before it', 'The current working directory is /tmp/elsewhere\nWorking directory: /home/dev/claude'],
      ['a loose mention after it', 'Working directory: /home/dev/claude\nThe current working directory is /tmp/elsewhere'],
      ["Gemini CLI's phrase before it", "I'm currently working in the directory: /tmp/elsewhere\nWorking directory: /home/dev/claude"],
    ])('prefers Claude Code\'s "Working directory:" over %s', (_label, text) => {
      expect(cwdOf(text)).toBe('/home/dev/claude');
    });

    // Claude Code sends messages before the system prompt, so a tool result is seen first.
    it('prefers the system prompt over a loose mention in an earlier message of a Claude Code request', () => {
      const view = readConversation('anthropic', {
        messages: [{ role: 'user', content: 'your current working directory is /tmp/elsewhere, run ls' }],
        system: [{ type: 'text', text: '<env>\nWorking directory: /home/dev/claude\n</env>' }],
      });
      expect(view.cwd).toBe('/home/dev/claude');
    });

    it('drops sentence punctuation after the path', () => {
      expect(cwdOf('Working directory: /home/dev/work.')).toBe('/home/dev/work');
    });

    it('is undefined when the request does not say', () => {
      expect(cwdOf('You are a helpful assistant.')).toBeUndefined();
    });
  });
});
