/** The pane layer: programs in pseudo-terminals with rendered screens and bounded histories. */
export { Pane, PANE_MARKER_VARIABLE, type ExitInfo, type PaneAgent, type PaneOutput, type ScreenSnapshot } from './pane.js';
export { PaneRegistry, DEFAULT_PANE_DEFAULTS, LIMITS, checkPaneSize, type CreatePaneOptions, type PaneDefaults, type PaneEnvProvider, type PaneJail, type PaneRegistryOptions } from './pane-registry.js';
export { RenderScheduler } from './render-scheduler.js';
export { waitForScreen, type WaitOptions, type WaitReason, type WaitResult } from './wait-for.js';
export { watchScreen, type ScreenCheck, type ScreenWait, type ScreenWaitOptions } from './watch-screen.js';
export { encodeKey, encodeKeys, KEY_NAMES, type KeyModes } from './keys.js';
export type { CursorState, TailResult, CapturedRow, CapturedCell, CellColour } from './screen.js';
export { renderCapture } from './render-capture.js';
