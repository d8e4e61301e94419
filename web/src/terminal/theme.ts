/** The terminals' colours and font; the log view's ANSI classes use the same 16 colours (styles.css). */
import type { ITheme } from '@xterm/xterm';

export const TERMINAL_FONT = 'ui-monospace, "DejaVu Sans Mono", "Cascadia Mono", Menlo, Consolas, monospace';

export const TERMINAL_THEME: ITheme = {
  background: '#0d1117',
  foreground: '#d0d7de',
  cursor: '#d0d7de',
  cursorAccent: '#0d1117',
  selectionBackground: '#3b5070',
  black: '#1b1f24',
  red: '#ff7b72',
  green: '#7ee787',
  yellow: '#e3b341',
  blue: '#79c0ff',
  magenta: '#d2a8ff',
  cyan: '#56d4dd',
  white: '#c9d1d9',
  brightBlack: '#6e7681',
  brightRed: '#ffa198',
  brightGreen: '#aff5b4',
  brightYellow: '#f8e3a1',
  brightBlue: '#a5d6ff',
  brightMagenta: '#e2c5ff',
  brightCyan: '#b3f0ff',
  brightWhite: '#ffffff',
};

/** Search highlights; the search addon wants #RRGGBB. */
export const SEARCH_DECORATIONS = {
  matchBackground: '#3d3a1a',
  matchBorder: '#8a7a2a',
  matchOverviewRuler: '#8a7a2a',
  activeMatchBackground: '#8a6d00',
  activeMatchBorder: '#e3b341',
  activeMatchColorOverviewRuler: '#e3b341',
};
