/**
 * Which pane an ask's TARGET names: a pane id; else the panes whose title or agent is the name,
 * leaving out the asker's own pane and exited panes; with several, those in the asker's folder;
 * one left is the target, none or several is an error that names the candidates.
 */
import { SwitchboardError } from '../core/errors.js';
import type { AskDirectory, AskTarget, Asker } from './types.js';

export function resolveTarget(directory: AskDirectory, target: string, from: Asker | undefined): AskTarget {
  const name = target.trim();
  if (name === '') throw new SwitchboardError('INVALID_PARAMS', 'the ask has no target: give a pane id or title, or an agent name');
  const byId = directory.get(name);
  if (byId) {
    if (!byId.alive) throw new SwitchboardError('PANE_EXITED', `pane ${byId.id} (${byId.title}) has exited: nothing can answer there`, { pane_id: byId.id });
    return byId;
  }
  const all = directory.list().filter((p) => p.id !== from?.paneId);
  const named = all.filter((p) => p.title === name || p.agent === name);
  const alive = named.filter((p) => p.alive);
  if (alive.length === 0) {
    if (named.length > 0) {
      const gone = named[0];
      throw new SwitchboardError('PANE_EXITED', `the ${name} pane${named.length > 1 ? 's have' : ' has'} exited: nothing can answer there`, { pane_id: gone?.id });
    }
    throw new SwitchboardError('PANE_NOT_FOUND', `no pane is called ${name} or runs an agent of that name`, { target: name });
  }
  if (alive.length === 1 && alive[0]) return alive[0];
  const here = from?.cwd !== undefined ? alive.filter((p) => p.cwd === from.cwd) : [];
  if (here.length === 1 && here[0]) return here[0];
  const candidates = (here.length > 1 ? here : alive).map((p) => ({ pane_id: p.id, title: p.title, agent: p.agent ?? null, cwd: p.cwd }));
  throw new SwitchboardError('INVALID_PARAMS', `${candidates.length} panes answer to ${name}${here.length > 1 ? ' in your folder' : ''}: name one by its pane id (${candidates.map((c) => c.pane_id).join(', ')})`, { target: name, candidates });
}
