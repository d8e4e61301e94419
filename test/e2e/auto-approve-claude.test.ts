import { describe, it } from 'vitest';
import { runAutoApproveAtSize, SIZES } from './auto-approve-sizes.js';

describe('claude: auto-approve completes in-workdir work at each terminal size', () => {
  it.each(SIZES)('%dx%d', { timeout: 240_000 }, async (cols, rows) => {
    await runAutoApproveAtSize('claude', cols, rows);
  });
});
