/** Watching a team run's board in tests, as every board does: by version, until a condition holds. */
import type { SwitchboardClient } from '../../src/client/index.js';
import type { TeamBoardInfo } from '../../src/protocol/methods.js';

/**
 * Watches run `runId`'s board by version until `done` holds for it, and answers nothing itself.
 * Past `timeoutMs` it throws with the board, and the planner's screen (what tells why it stopped).
 */
export async function boardUntil(c: SwitchboardClient, runId: string, done: (board: TeamBoardInfo) => boolean, what: string, timeoutMs = 60_000): Promise<TeamBoardInfo> {
  let board = await c.teamRunGet(runId);
  const deadline = Date.now() + timeoutMs;
  while (!done(board)) {
    if (Date.now() > deadline) {
      const planner = board.planner.pane_id ? (await c.getText(board.planner.pane_id, { lines: 60 }).catch(() => ({ text: '(its pane is gone)' }))).text : '(no planner pane)';
      throw new Error(`${what}: not seen; the board: ${JSON.stringify(board, null, 1)}\nthe planner's screen:\n${planner}`);
    }
    board = await c.teamRunGet(runId, { afterVersion: board.version, waitMs: 5_000 });
  }
  return board;
}
