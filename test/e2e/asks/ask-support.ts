/**
 * What the ask process tests share: real agent CLIs in panes of an in-process registry against the
 * scripted model, each behind a PaneAskTarget, listed by a directory the engine resolves against.
 */
import path from 'node:path';
import { afterAll } from 'vitest';
import { AskEngine, PaneAskTarget, type AskDirectory, type AskTarget } from '../../../src/asks/index.js';
import { PaneRegistry } from '../../../src/pane/index.js';
import { startSandboxedAgent, type AgentInPane } from '../../support/agent-panes.js';
import type { ScriptedModel } from '../scripted-model.js';

class TestDirectory implements AskDirectory {
  readonly targets: AskTarget[] = [];
  list(): readonly AskTarget[] {
    return this.targets;
  }
  get(paneId: string): AskTarget | undefined {
    return this.targets.find((t) => t.id === paneId);
  }
}

export interface AskRig {
  registry: PaneRegistry;
  directory: TestDirectory;
  engine: AskEngine;
  /** Starts `agent` in a fresh HOME and work folder and lists it as an ask target. */
  start(agent: string, options?: { title?: string; cwd?: string }): Promise<AgentInPane & { target: PaneAskTarget }>;
}

/** A registry, a directory and an engine for the file's tests; everything is closed after them. */
export function useAskRig(sm: ScriptedModel): AskRig {
  const registry = new PaneRegistry({});
  const directory = new TestDirectory();
  const engine = new AskEngine({ directory });
  afterAll(async () => {
    engine.dispose();
    await registry.close({ graceMs: 2_000 });
  });
  return {
    registry,
    directory,
    engine,
    async start(agent, options = {}) {
      const home = sm.tempDir(`sb-ask-${agent}-home-`).dir;
      const cwd = options.cwd ?? path.join(sm.tempDir(`sb-ask-${agent}-work-`).dir, 'work');
      const started = await startSandboxedAgent(registry, agent, { home, cwd, modelUrl: sm.model.url, ...(options.title ? { title: options.title } : {}) });
      const target = new PaneAskTarget({ agent: started.agent, home: started.home });
      directory.targets.push(target);
      return { ...started, target };
    },
  };
}
