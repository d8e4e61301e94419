/**
 * Where a caller runs, as a limit on what its token allows. A program in an agent pane (or any pane
 * whose programs hold a scoped token) can find the owner's token: the runtime file, an owner
 * shell's environment in /proc. It cannot change the process it runs in, so the daemon asks the OS
 * who is calling (platform/peer-process.ts) and holds that process to its pane's grant, whatever
 * token it shows: by its ancestors (a pane's first process), and by the pane marker every process a
 * pane starts inherits, which survives a double fork or `setsid` out of the tree. A process of a
 * removed scoped pane may do nothing. What this cannot see (a program that clears its environment
 * and leaves the tree, as the same OS user) is the same-user limit the README states; the sandbox
 * (bubblewrap) is the boundary for that.
 */
import type net from 'node:net';
import { PANE_MARKER_VARIABLE, type PaneRegistry } from '../pane/index.js';
import { collectProcessTree, connectionPeer, findProcessesWithEnv, listProcesses, processEnvValue, processLineage } from '../platform/index.js';
import type { Grant } from './authorize.js';
import type { TokenRegistry } from './tokens.js';

/**
 * The cap of a caller the daemon cannot check while scoped panes run: the OS said someone connected,
 * but that process has exited or let go of the connection (connect, write, exit), so it may have
 * been a pane's. Nothing is allowed; a client that waits for its answer is never this.
 */
const UNIDENTIFIED_CALLER: Grant = { owner: false, scopes: new Set(), who: 'a caller whose process had gone before the daemon could check it' };

/** The most two caps both allow. */
function intersect(a: Grant, b: Grant): Grant {
  return { owner: false, scopes: new Set([...a.scopes].filter((s) => b.scopes.has(s))), ...(a.paneId !== undefined ? { paneId: a.paneId } : {}) };
}

export class CallerOrigins {
  constructor(
    private readonly panes: Pick<PaneRegistry, 'find'>,
    private readonly tokens: TokenRegistry,
  ) {}

  /** The most process `pid` may do, or undefined when it runs in no scoped pane (the owner's shells, outside any pane). */
  capOfProcess(pid: number): Grant | undefined {
    if (!this.tokens.hasScopedPanes) return undefined;
    const caps: Grant[] = [];
    const lineage = new Set(processLineage(pid));
    for (const pane of this.livePanes()) if (lineage.has(pane.pid)) caps.push(pane.grant);
    const marker = processEnvValue(pid, PANE_MARKER_VARIABLE);
    const marked = marker === undefined ? undefined : this.tokens.grantOfPane(marker);
    if (marked) caps.push(marked);
    return caps.length === 0 ? undefined : caps.reduce(intersect);
  }

  /**
   * The cap of whoever is at the other end of `socket` (see capOfProcess): undefined when it runs in
   * no scoped pane, or the OS does not say (then the token alone decides, as everywhere before);
   * nothing at all when it had gone before it could be checked.
   */
  async capOfConnection(socket: net.Socket): Promise<Grant | undefined> {
    if (!this.tokens.hasScopedPanes) return undefined;
    const peer = await connectionPeer(socket, () => this.scopedProcesses());
    if (peer === 'gone') return UNIDENTIFIED_CALLER;
    if (peer === 'outside' || peer === 'unknown') return undefined;
    return this.capOfProcess(peer.pid);
  }

  /** The running panes whose programs hold a scoped token, with their first process and grant. */
  private livePanes(): { pid: number; grant: Grant }[] {
    const live: { pid: number; grant: Grant }[] = [];
    for (const [paneId, grant] of this.tokens.scopedPanes()) {
      const pane = this.panes.find(paneId);
      // An exited pane's pid may belong to another process by now.
      if (pane?.alive) live.push({ pid: pane.pid, grant });
    }
    return live;
  }

  /**
   * Every process a scoped pane started that still runs: its tree, and whatever carries its marker
   * (left the tree by a double fork or `setsid`). A TCP caller outside these is not held to a pane.
   */
  private scopedProcesses(): Set<number> {
    const found = new Set<number>();
    const processes = listProcesses();
    for (const pane of this.livePanes()) for (const pid of collectProcessTree(pane.pid, processes)) found.add(pid);
    for (const { pid, value } of findProcessesWithEnv(PANE_MARKER_VARIABLE)) if (this.tokens.grantOfPane(value) !== undefined) found.add(pid);
    return found;
  }
}
