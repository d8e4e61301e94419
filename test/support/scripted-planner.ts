/**
 * A planner CLI for team-run tests: a scripted program standing in for an agent whose model
 * plans, speaking only marker lines. It prints one call at a time, each once the result of the
 * one before is back, and logs the brief's length and every result it is given, one JSON a line.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ProfileInput } from '../../src/agents/index.js';

/** One call: the tool's seed name and its parameters. */
export type PlannerCall = [string, Record<string, unknown>];

/** The planner's profile: "planner> " when idle, "working…" while it thinks. */
export const PLANNER_PROFILE_DATA = {
  name: 'scripted-planner',
  binary: { names: ['scripted-planner'] },
  version_args: null,
  interactive_args: [],
  screens: [{ versions: '*', idle: [{ pattern: '^planner>', rows: 1 }], busy: [{ pattern: '^working…' }] }],
  approval_keys: { allow_once: ['y'], deny: ['n'] },
  input: { separate_enter: true, echo_timeout_ms: 1_000, enter_delay_ms: 50, paste_multiline: true, submit_patience_ms: 15_000 },
} satisfies ProfileInput;

/**
 * A planner program's keyboard: what is typed or pasted is echoed, and each Enter outside a paste
 * hands the text so far to the program's `onPrompt`; Ctrl+U and Backspace edit the line. A program may define `deafNow(c)`: while it
 * says true, a key is dropped unseen.
 */
const KEYBOARD = `let typed = '', pasting = false;
process.stdin.setRawMode(true);
process.stdin.on('data', (d) => {
  let s = d.toString();
  while (s.length > 0) {
    if (s.startsWith('\\x1b[200~')) { pasting = true; s = s.slice(6); continue; }
    if (s.startsWith('\\x1b[201~')) { pasting = false; s = s.slice(6); continue; }
    const c = s[0]; s = s.slice(1);
    if (typeof deafNow === 'function' && deafNow(c, pasting)) continue;
    // A line editor's keys, as a CLI's input box takes them: Ctrl+U empties the line, Backspace
    // takes the last character back, Ctrl+A and Ctrl+E move in it.
    if (!pasting && c === '\\x15') { typed = ''; continue; }
    if (!pasting && (c === '\\x7f' || c === '\\b')) { typed = typed.slice(0, -1); out('\\b \\b'); continue; }
    if (!pasting && (c === '\\x01' || c === '\\x05')) continue;
    if (c === '\\r' && !pasting) {
      const text = typed.trim(); typed = '';
      if (text !== '') onPrompt(text);
      continue;
    }
    typed += c === '\\r' ? '\\n' : c;
    out(c === '\\r' || c === '\\n' ? '\\r\\n' : c);
  }
});`;

/**
 * A planner CLI: "planner> " when idle, "working…" while it thinks. It takes its nonce from the
 * brief, prints one call at a time as a marker line, and logs every result it is given.
 */
export function plannerProgram(dir: string, log: string, calls: readonly PlannerCall[], options: { deafTo?: string; timesTo?: string } = {}): string {
  // One program a log: a test may have planners with calls of their own.
  const file = path.join(dir, `planner-${path.basename(log, '.jsonl')}.cjs`);
  writeFileSync(
    file,
    `const fs = require('fs');
const CALLS = ${JSON.stringify(calls)};
let nonce = null, step = 0;
// Deaf to the first result typed for call DEAF_TO (as a CLI busy elsewhere would be): every key of it dropped, up to its Enter.
const DEAF_TO = ${JSON.stringify(options.deafTo ?? null)};
// When each result arrived (ms since the epoch, one a line): the bench's delivery figure.
const TIMES_TO = ${JSON.stringify(options.timesTo ?? null)};
let deaf = false;
function deafNow(c, pasting) {
  if (!deaf) return false;
  if (c === '\\r' && !pasting) deaf = false;
  return true;
}
const out = (s) => process.stdout.write(s);
const show = (lines) => out('\\x1b[H\\x1b[2J' + lines.join('\\r\\n') + '\\r\\nplanner> ');
out('\\x1b[?2004h');
show(['planner ready']);
const next = () => {
  if (step >= CALLS.length) return show(['all done']);
  const [method, params] = CALLS[step++];
  if ('c' + step === DEAF_TO) deaf = true;
  show(['__MPS_TOOL__ ' + JSON.stringify({ id: 'c' + step, method, params, nonce })]);
};
const handle = (text, at) => {
  if (nonce === null) {
    const m = /Your nonce is ([0-9a-f]+)\\./.exec(text);
    // The brief, and how it says to call the tools (a brief for MCP gives no nonce).
    fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ brief: text.length, via: m ? 'markers' : text.includes('through your MCP tools') ? 'mcp' : 'neither' }) + '\\n');
    if (!m) return show(['no nonce in: ' + text.slice(0, 40)]);
    nonce = m[1];
    return next();
  }
  if (text.startsWith('__MPS_TOOL_RESULT__ ')) {
    if (TIMES_TO !== null) fs.appendFileSync(TIMES_TO, at + '\\n');
    fs.appendFileSync(${JSON.stringify(log)}, text.slice('__MPS_TOOL_RESULT__ '.length) + '\\n');
    return next();
  }
  show(['?', JSON.stringify(text.slice(0, 80))]);
};
function onPrompt(text) {
  // When the Enter came: the moment the text was delivered.
  const at = Date.now();
  show(['working…']);
  setTimeout(() => handle(text, at), 100);
}
${KEYBOARD}
`,
  );
  return file;
}

/**
 * A planner CLI that calls the team tools over MCP, as Claude Code or Codex would: once it has its
 * brief it starts Switchboard's MCP server (`switchboard mcp`, on stdio, with its own environment:
 * its pane's token and team role) through the MCP SDK's own client, logs the tools it is offered,
 * then makes each call in order and logs what comes back (`{tool, isError, content}`).
 */
export function mcpPlannerProgram(dir: string, log: string, calls: readonly PlannerCall[], cli: string, sdkRoot: string): string {
  const file = path.join(dir, 'mcp-planner.cjs');
  writeFileSync(
    file,
    `const fs = require('fs');
const path = require('path');
const { Client } = require(path.join(${JSON.stringify(sdkRoot)}, 'dist/cjs/client/index.js'));
const { StdioClientTransport } = require(path.join(${JSON.stringify(sdkRoot)}, 'dist/cjs/client/stdio.js'));
const CALLS = ${JSON.stringify(calls)};
const log = (entry) => fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify(entry) + '\\n');
const out = (s) => process.stdout.write(s);
let started = false;
out('\\x1b[?2004h\\x1b[H\\x1b[2Jplanner> ');
async function plan() {
  const client = new Client({ name: 'scripted-planner', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [${JSON.stringify(cli)}, 'mcp'], env: process.env, stderr: 'ignore' }));
  log({ tools: (await client.listTools()).tools.map((t) => t.name).sort() });
  for (const [tool, args] of CALLS) {
    const result = await client.callTool({ name: tool, arguments: args });
    log({ tool, isError: result.isError === true, content: result.content.map((c) => c.text).join('') });
  }
  await client.close();
}
function onPrompt(text) {
  if (started) return;
  started = true;
  log({ brief: text.length });
  out('\\x1b[H\\x1b[2Jworking…');
  plan().then(() => out('\\x1b[H\\x1b[2Jall done\\r\\nplanner> '), (err) => { log({ failed: String(err && err.message || err) }); out('\\x1b[H\\x1b[2Jfailed\\r\\nplanner> '); });
}
${KEYBOARD}
`,
  );
  return file;
}

/**
 * A worker CLI that, once given a prompt, works for ever: "working…" with a spinner and a seconds
 * counter that move five times a second and nothing else, as a CLI that hangs on a tool looks.
 * Keys typed meanwhile are echoed on a line of their own. Same screens as the planner's profile.
 */
export function busyWorkerProgram(dir: string): string {
  const file = path.join(dir, 'busy-worker.cjs');
  writeFileSync(
    file,
    `const out = (s) => process.stdout.write(s);
const SPIN = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';
let typedLine = '', frame = 0, since = 0, busy = null;
const show = (lines) => out('\\x1b[H\\x1b[2J' + lines.join('\\r\\n'));
show(['worker ready', 'planner> ']);
function draw() {
  frame++;
  show(['working… ' + SPIN[frame % SPIN.length] + ' ' + Math.floor((Date.now() - since) / 1000) + 's', 'typed: ' + typedLine]);
}
function onPrompt(text) {
  if (busy) return;
  since = Date.now();
  busy = setInterval(draw, 200);
}
// While it works, what is typed goes on its line (Ctrl+U empties it, Backspace takes one back; other control keys show nothing).
const deafNow = (c) => {
  if (!busy) return false;
  if (c === '\\x15') typedLine = '';
  else if (c === '\\x7f' || c === '\\b') typedLine = typedLine.slice(0, -1);
  else if (c >= ' ') typedLine += c;
  draw();
  return true;
};
${KEYBOARD}
`,
  );
  return file;
}

/**
 * A worker CLI that does each task it is given in `workMs`: "working…" meanwhile (its state moves
 * to busy, as an agent's does), then it writes the time it finished (ms since the epoch) to
 * `done-K` in `stampDir` (K counts from 0) and shows its idle prompt again.
 */
export function taskWorkerProgram(dir: string, stampDir: string, workMs: number): string {
  const file = path.join(dir, 'task-worker.cjs');
  writeFileSync(
    file,
    `const fs = require('fs');
const path = require('path');
const out = (s) => process.stdout.write(s);
const show = (lines) => out('\\x1b[H\\x1b[2J' + lines.join('\\r\\n'));
let done = 0, busy = false;
show(['worker ready', 'planner> ']);
function onPrompt(text) {
  if (busy) return;
  busy = true;
  show(['working… on ' + text.slice(0, 40)]);
  setTimeout(() => {
    fs.writeFileSync(path.join(${JSON.stringify(stampDir)}, 'done-' + done++), String(Date.now()));
    busy = false;
    show(['finished ' + text.slice(0, 40), 'planner> ']);
  }, ${workMs});
}
${KEYBOARD}
`,
  );
  return file;
}
