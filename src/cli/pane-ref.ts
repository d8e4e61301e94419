import { SwitchboardError } from '../core/errors.js';
import type { SwitchboardClient } from '../client/index.js';

/**
 * Resolves what a person typed to a pane id: an exact id, else an exact title (if only one pane has
 * it), else a unique id prefix, as `docker` resolves container names.
 */
export async function resolvePane(client: SwitchboardClient, ref: string): Promise<string> {
  const { panes } = await client.list();
  if (panes.some((p) => p.pane_id === ref)) return ref;
  const byTitle = panes.filter((p) => p.title === ref);
  if (byTitle.length === 1) return (byTitle[0] as { pane_id: string }).pane_id;
  const byPrefix = panes.filter((p) => p.pane_id.startsWith(ref));
  if (byTitle.length === 0 && byPrefix.length === 1) return (byPrefix[0] as { pane_id: string }).pane_id;
  const matches = [...byTitle, ...byPrefix];
  if (matches.length > 1) {
    throw new SwitchboardError('INVALID_PARAMS', `ambiguous pane '${ref}': ${[...new Set(matches.map((p) => `${p.pane_id} (${p.title})`))].join(', ')}`);
  }
  throw new SwitchboardError('PANE_NOT_FOUND', `pane not found: ${ref}`, { pane_id: ref });
}
