/**
 * The layer rule bites (issues 12 and 23): the project's own dependency-cruiser rules, run on small
 * projects written for each case, report an import a room may not make, however its path is
 * spelled (`./../agents`, `../pane/../agents`, the library surface `../index.js`, a dynamic
 * `import()`), and any cycle, type-only imports included; the same imports downward pass. And the
 * project itself passes with the allow-list equal to the edges its code uses.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../support/shell.js';
// @ts-expect-error: plain JavaScript of the lint step, typed by use here
import { checkLayers, eagerPackageViolations } from '../../scripts/check-layers.mjs';

interface LayerReport {
  violations: { rule: string; from: string; to: string }[];
  unused: string[];
  edges: string[];
  counts: { upward_imports: number; cycles: number; used_edges: number; allowed_edges: number };
}
const check = checkLayers as (baseDir?: string, folder?: string) => Promise<LayerReport>;

/** A module as dependency-cruiser reports it: its resolved imports, each dynamic or type-only or neither. */
interface CruisedModule {
  source: string;
  dependencies: { resolved: string; dynamic: boolean; dependencyTypes: string[] }[];
}
const eagerPackages = eagerPackageViolations as (modules: CruisedModule[], rules: { entries: string[]; packages: string[]; why: string }[]) => { rule: string; from: string; to: string; comment: string }[];

const TSCONFIG = { compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true }, include: ['src'] };

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A project of `files` (path under src/ → text), with every room the rules name holding one module. */
function project(files: Record<string, string>): string {
  const { dir, cleanup } = tempDir('sb-layers-');
  cleanups.push(cleanup);
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  const all: Record<string, string> = {
    'index.ts': "export const surface = 1;\n",
    'core/errors.ts': 'export const core = 1;\n',
    'pane/index.ts': 'export const pane = 1;\n',
    'agents/index.ts': 'export const agents = 1;\n',
    'protocol/framing.ts': 'export const protocol = 1;\n',
    'api/index.ts': 'export const api = 1;\n',
    'daemon/index.ts': 'export const daemon = 1;\n',
    ...files,
  };
  for (const [file, text] of Object.entries(all)) {
    mkdirSync(path.dirname(path.join(dir, 'src', file)), { recursive: true });
    writeFileSync(path.join(dir, 'src', file), text);
  }
  return dir;
}

async function violations(files: Record<string, string>): Promise<string[]> {
  const report = await check(project(files));
  return report.violations.map((v) => `${v.rule}: ${v.from} -> ${v.to}`);
}

describe('the layer rule', () => {
  it('fails an upward import: the wire importing the agents layer', async () => {
    expect(await violations({ 'protocol/bad.ts': "import { agents } from '../agents/index.js';\nexport const x = agents;\n" })).toEqual(['layers:protocol: src/protocol/bad.ts -> src/agents/index.ts']);
  }, 60_000);

  it('fails a transport that reaches around the api layer to the panes', async () => {
    expect(await violations({ 'surfaces/rpc/dispatch.ts': "import { pane } from '../../pane/index.js';\nexport const x = pane;\n" })).toEqual(['layers:surfaces: src/surfaces/rpc/dispatch.ts -> src/pane/index.ts']);
  }, 60_000);

  it('fails the client importing the daemon, and the pane layer importing the agents above it', async () => {
    expect(await violations({ 'client/client.ts': "import { daemon } from '../daemon/index.js';\nexport const x = daemon;\n" })).toHaveLength(1);
    expect(await violations({ 'pane/keys.ts': "import { agents } from '../agents/index.js';\nexport const x = agents;\n" })).toHaveLength(1);
  }, 60_000);

  it('fails every spelling that passed the old text match: ./../, a detour through another folder, the library surface, a dynamic import()', async () => {
    expect(
      await violations({
        'pane/dot-slash.ts': "import { agents } from './../agents/index.js';\nexport const x = agents;\n",
        'pane/detour.ts': "import { agents } from '../pane/../agents/index.js';\nexport const x = agents;\n",
        'pane/surface.ts': "import { surface } from '../index.js';\nexport const x = surface;\n",
        'pane/dynamic.ts': "export async function later(): Promise<number> {\n  return (await import('../agents/index.js')).agents;\n}\n",
      }),
    ).toEqual(
      expect.arrayContaining([
        'layers:pane: src/pane/dot-slash.ts -> src/agents/index.ts',
        'layers:pane: src/pane/detour.ts -> src/agents/index.ts',
        'layers:pane: src/pane/surface.ts -> src/index.ts',
        'no-surface-inside: src/pane/surface.ts -> src/index.ts',
        'layers:pane: src/pane/dynamic.ts -> src/agents/index.ts',
      ]),
    );
  }, 60_000);

  it('fails a room of agents/ reached from outside around its barrel, and a cycle made of type-only imports', async () => {
    expect(await violations({ 'drivers/x.ts': "import { y } from '../agents/live/y.js';\nexport const x = y;\n", 'agents/live/y.ts': 'export const y = 1;\n' })).toEqual([
      'layers:drivers: src/drivers/x.ts -> src/agents/live/y.ts',
    ]);
    const cycle = await violations({
      'api/a.ts': "import type { B } from './b.js';\nexport interface A { b?: B }\n",
      'api/b.ts': "import type { A } from './a.js';\nexport interface B { a?: A }\n",
    });
    expect(cycle).toEqual([expect.stringMatching(/^no-cycles: src\/api\/[ab]\.ts -> src\/api\/[ab]\.ts$/)]);
  }, 60_000);

  it('lets a layer import the ones below it', async () => {
    expect(await violations({ 'agents/live/input.ts': "import { core } from '../core/errors.js';\nimport { pane } from '../pane/index.js';\nexport const x = [core, pane];\n" })).toEqual([]);
  }, 60_000);

  it('fails a static import chain from an entry to a package loaded only when used, and lets import() and type-only imports through', () => {
    const dep = (resolved: string, kind: 'static' | 'dynamic' | 'type' = 'static') => ({ resolved, dynamic: kind === 'dynamic', dependencyTypes: kind === 'type' ? ['type-only'] : ['local'] });
    const modules: CruisedModule[] = [
      { source: 'src/cli/main.ts', dependencies: [dep('src/daemon/bridge.ts'), dep('src/daemon/loader.ts'), dep('src/daemon/types.ts', 'type')] },
      { source: 'src/daemon/bridge.ts', dependencies: [dep('src/cluster/connection.ts')] },
      { source: 'src/cluster/connection.ts', dependencies: [dep('node_modules/@nats-io/transport-node/index.js')] },
      { source: 'src/daemon/loader.ts', dependencies: [dep('src/ledger/postgres-store.ts', 'dynamic')] },
      { source: 'src/ledger/postgres-store.ts', dependencies: [dep('node_modules/pg/esm/index.mjs')] },
      { source: 'src/daemon/types.ts', dependencies: [dep('node_modules/pg/esm/index.mjs')] },
    ];
    const found = eagerPackages(modules, [{ entries: ['src/cli/main.ts'], packages: ['pg', '@nats-io'], why: 'lazy' }]);
    expect(found.map((v) => `${v.rule}: ${v.from} -> ${v.to}`)).toEqual(['lazy-packages: src/cluster/connection.ts -> node_modules/@nats-io/transport-node/index.js']);
    expect(found[0]?.comment).toContain('src/cli/main.ts -> src/daemon/bridge.ts -> src/cluster/connection.ts');
  });

  it('holds on the project itself, with every allowed edge used', async () => {
    const report = await check();
    expect(report.violations).toEqual([]);
    expect(report.unused).toEqual([]);
    expect(report.counts).toMatchObject({ upward_imports: 0, cycles: 0 });
    expect(report.counts.used_edges).toBe(report.counts.allowed_edges);
  }, 120_000);
});
