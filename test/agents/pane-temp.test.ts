/**
 * An agent pane's private temporary folder outlives its first process only as long as something
 * the pane started still runs: a dev server an agent left behind keeps writing there until the
 * pane is removed (which ends it); a CLI that left nothing has its folder removed as it exits.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPrivateTemp, releaseTempWithPane } from '../../src/agents/index.js';
import { PaneRegistry } from '../../src/pane/index.js';
import { until } from '../support/processes.js';
import { tempDir } from '../support/shell.js';

const root = tempDir('sb-pane-temp-');
const registry = new PaneRegistry({});
afterAll(async () => {
  await registry.close({ graceMs: 500 });
  root.cleanup();
});

describe.runIf(process.platform !== 'win32')('an agent pane\u2019s temporary folder', () => {
  it('goes as the pane\u2019s program exits when it left nothing running', async () => {
    const temp = createPrivateTemp(path.join(root.dir, 'tmp'));
    const pane = registry.create({ argv: ['sh', '-c', 'echo done'], env: temp.env });
    releaseTempWithPane(registry, pane, temp);
    await pane.waitForExit();
    await until(() => !existsSync(temp.dir), 'the folder to go with the pane');
  });

  it('stays while what the program left runs, and goes when removing the pane ends it', async () => {
    const temp = createPrivateTemp(path.join(root.dir, 'tmp'));
    // The program starts a server of its own that outlives the terminal's hangup, as an agent's
    // shell tool may (`nohup npm run dev &`), and exits once the server ignores the hangup.
    const ready = path.join(root.dir, 'server-ready');
    const server = `trap "" HUP; touch ${ready}; exec sleep 60`;
    const pane = registry.create({ argv: ['sh', '-c', `sh -c '${server}' & while [ ! -e ${ready} ]; do sleep 0.01; done; echo started`], env: temp.env });
    releaseTempWithPane(registry, pane, temp);
    await pane.waitForExit();
    expect(existsSync(temp.dir)).toBe(true);
    await registry.remove(pane.id);
    expect(existsSync(temp.dir)).toBe(false);
  });
});
