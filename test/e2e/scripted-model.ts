/**
 * What the e2e files against the scripted model share: the model server for the file's life,
 * temporary folders removed after it, the pinned CLIs on the daemon's path, and the rules most
 * scenarios use.
 */
import { afterAll, beforeAll } from 'vitest';
import { ModelServer, type Scenario } from '../../src/model-server/index.js';
import { tempDir } from '../support/shell.js';
import { useAgentBinaries } from './agent-flow.js';

type Rule = Scenario['rules'][number];

/** The rules many scenarios share, each under the prompt words that trigger it. */
export const RULES = {
  sayHello: { match: 'say hello', steps: [{ text: 'Hello from the scripted model.' }] },
  writeFileByShell: {
    match: 'write a file',
    steps: [
      { tool: 'shell', command: 'echo hello-from-tool > tool_out.txt && cat tool_out.txt', description: 'Write tool_out.txt' },
      { text: 'Done: wrote tool_out.txt.' },
    ],
  },
  failNow: { match: 'fail now', steps: [{ error: 400, message: 'scripted failure for the test' }] },
  /** Long enough that a test always cancels it first. */
  takeYourTime: { match: 'take your time', steps: [{ text: 'Finally done.', delay_ms: 60_000 }] },
} satisfies Record<string, Rule>;

export interface ScriptedModel {
  /** The server (inside tests only). */
  readonly model: ModelServer;
  /** A temporary folder, removed once the file's tests are done. */
  tempDir(prefix: string): { dir: string; cleanup: () => void };
}

/**
 * Starts `scenario` before the file's tests and stops it after them, with every folder from
 * `tempDir`. Call it before the file's own afterAll hooks: those run first (stack order), so
 * sessions the file closes still have their model.
 */
export function useScriptedModel(scenario: Scenario): ScriptedModel {
  let model: ModelServer | undefined;
  const dirs: { cleanup: () => void }[] = [];
  beforeAll(async () => {
    useAgentBinaries();
    model = await ModelServer.start({ scenario });
  });
  afterAll(async () => {
    await model?.close();
    for (const d of dirs) d.cleanup();
  });
  return {
    get model() {
      if (!model) throw new Error('useScriptedModel: only available inside tests');
      return model;
    },
    tempDir(prefix) {
      const made = tempDir(prefix);
      dirs.push(made);
      return made;
    },
  };
}
