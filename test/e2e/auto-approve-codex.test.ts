import { describe, it } from 'vitest';
import { runAutoApproveAtSize, runTwoRefusals, SIZES } from './auto-approve-sizes.js';

describe('codex: auto-approve completes in-workdir work at each terminal size', () => {
  it.each(SIZES)('%dx%d', { timeout: 240_000 }, async (cols, rows) => {
    await runAutoApproveAtSize('codex', cols, rows);
  });

  it('ends two refused tasks in a row needs_input at 80x24, the first notice scrolled away', { timeout: 240_000 }, async () => {
    await runTwoRefusals('codex', 80, 24);
  });
});
