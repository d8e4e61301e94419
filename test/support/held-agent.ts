/**
 * A custom-agent (`mytool`, test/fixtures/custom-agent) pane held at its [y/n] question: an agent
 * that is not idle, so an ask for it waits in its line until the test lets it go.
 */
import type { SwitchboardClient } from '../../src/client/index.js';

/** Starts `mytool` in `cwd` and prompts it until it waits on its approval; resolves with its pane id. */
export async function agentHeldAtApproval(c: SwitchboardClient, cwd: string): Promise<string> {
  const { pane_id: paneId } = await c.createPane({ agent: 'mytool', cwd });
  let asking = (): void => undefined;
  const waiting = new Promise<void>((resolve) => (asking = resolve));
  const states = await c.subscribe({ paneId, events: ['state'] }, { state: (n) => n.state === 'waiting_approval' && asking() });
  await c.sendPrompt(paneId, 'make a file');
  await waiting;
  await states.unsubscribe();
  return paneId;
}
