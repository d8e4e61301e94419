/** The pane layer: programs in pseudo-terminals with rendered screens and bounded histories. */
export { Pane, PANE_MARKER_VARIABLE, type ExitInfo, type PaneAgent, type PaneOutput, type ScreenSnapshot } from './pane.js';
export { PaneRegistry, checkPaneSize, type CreatePaneOptions, type PaneDefaults } from './pane-registry.js';
export { waitForScreen, type WaitResult } from './wait-for.js';
export { watchScreen } from './watch-screen.js';
export { encodeKey, encodeKeys } from './keys.js';
export type { CapturedRow, CapturedCell, CellColour } from './screen.js';
export { renderCapture } from './render-capture.js';
