/**
 * The memory for what panes and sessions hold of their output (logs, and output not yet parsed),
 * shared: each pane or session has an equal share (128 KiB to 8 MiB), so memory follows the number
 * of panes, not how much they print. Agent and run logs spill what their share cannot hold to disk
 * and a pane past its share stops reading its program, so a smaller budget loses no agent output
 * (a shell pane's log keeps less; its scrollback is apart from this budget). A daemon and a
 * cluster node each have one.
 * 12 MiB keeps the daemon with 10 panes flooding near the seed's "< 100 MB with all panes" (it was
 * 32 MiB: 131 MiB at the peak); `--output-memory` gives a daemon more where memory is plentiful.
 */
export const OUTPUT_MEMORY_BUDGET = { totalBytes: 12 * 1024 * 1024, minShare: 128 * 1024, maxShare: 8 * 1024 * 1024 } as const;
/** The disk spilled logs may take together, shared the same way (4 MiB to 1 GiB each). */
export const SPILL_DISK_BUDGET = { totalBytes: 2 * 1024 * 1024 * 1024, minShare: 4 * 1024 * 1024, maxShare: 1024 * 1024 * 1024 } as const;
