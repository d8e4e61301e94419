/**
 * The library's chosen surface, as a user's project sees it: the package's entry and its subpath
 * exports (client, agents, runs, events) resolve to the built JavaScript and to generated
 * declarations that type-check a consumer, through package.json `exports` alone (a project with
 * `switchboard` in its node_modules, NodeNext resolution). Needs the build (the test line's).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './support/shell.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const project = tempDir('sb-surface-');
afterAll(() => project.cleanup());

const CONSUMER = `import { connect, SwitchboardError } from 'switchboard';
import { SwitchboardClient, resolveEndpoint } from 'switchboard/client';
import { AgentCatalog, type AgentProfile } from 'switchboard/agents';
import { RunService, type RunStatus } from 'switchboard/runs';
import { RUN_EVENT_TYPES, type StreamEvent, type AgentState } from 'switchboard/events';

const profile: AgentProfile = new AgentCatalog().get('claude');
const status: RunStatus = 'completed';
const state: AgentState = 'idle';
const event: StreamEvent | undefined = undefined;
export const used = [connect, SwitchboardError, SwitchboardClient, resolveEndpoint, profile, RunService, status, RUN_EVENT_TYPES, state, event];
`;

describe('the public surface', () => {
  it('resolves every subpath to built JavaScript and declarations that type-check a consumer', () => {
    const dir = project.dir;
    mkdirSync(path.join(dir, 'node_modules'));
    symlinkSync(root, path.join(dir, 'node_modules', 'switchboard'), 'dir');
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: ['node'], typeRoots: [path.join(root, 'node_modules', '@types')] }, files: ['consumer.ts'] }));
    writeFileSync(path.join(dir, 'consumer.ts'), CONSUMER);
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    let out = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      out = String((err as { stdout?: string }).stdout ?? err);
    }
    expect(out).toBe('');
    // And at run time, each subpath loads.
    const loaded = execFileSync(process.execPath, ['--input-type=module', '-e', "for (const p of ['switchboard', 'switchboard/client', 'switchboard/agents', 'switchboard/runs', 'switchboard/events']) { const m = await import(p); console.log(p, Object.keys(m).length > 0); }"], { cwd: dir, encoding: 'utf8' });
    expect(loaded.trim().split('\n')).toEqual(['switchboard true', 'switchboard/client true', 'switchboard/agents true', 'switchboard/runs true', 'switchboard/events true']);
  }, 120_000);
});
