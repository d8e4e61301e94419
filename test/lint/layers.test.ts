/**
 * The layer rule bites (issue 12): the project's own ESLint configuration, run on code that imports
 * a layer above its own, reports it; the same import downward passes. If the rule were missing or
 * mistyped, the lint step could not be trusted to keep the layers.
 */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const eslint = new ESLint({ cwd: root });

/**
 * The layer-rule messages for `code` as if it were the file `file`: an existing file of the folder
 * (the type-aware parser needs a file its project knows), its text replaced for this lint only.
 */
async function layerErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('the layer rule', () => {
  it('fails an upward import: the wire importing the agents layer', async () => {
    const errors = await layerErrors('src/protocol/framing.ts', "import { AgentCatalog } from '../agents/index.js';\nexport const x = AgentCatalog;\n");
    expect(errors).toEqual([expect.stringContaining('src/protocol/ may import only core, contract')]);
  }, 60_000);

  it('fails a transport that reaches around the api layer to the panes', async () => {
    const errors = await layerErrors('src/surfaces/rpc/dispatch.ts', "import { PaneRegistry } from '../../pane/index.js';\nexport const x = PaneRegistry;\n");
    expect(errors).toEqual([expect.stringContaining('src/surfaces/ may import only core, platform, contract, protocol, api')]);
  }, 60_000);

  it('fails the client importing the daemon, and the pane layer importing the agents above it', async () => {
    expect(await layerErrors('src/client/client.ts', "import { Daemon } from '../daemon/index.js';\nexport const x = Daemon;\n")).toHaveLength(1);
    expect(await layerErrors('src/pane/keys.ts', "import { detectScreen } from '../agents/index.js';\nexport const x = detectScreen;\n")).toHaveLength(1);
  }, 60_000);

  it('lets a layer import the ones below it', async () => {
    expect(await layerErrors('src/agents/input.ts', "import { Emitter } from '../core/emitter.js';\nimport { PaneRegistry } from '../pane/index.js';\nexport const x = [Emitter, PaneRegistry];\n")).toEqual([]);
  }, 60_000);
});
