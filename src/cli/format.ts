import type { PaneInfo } from '../protocol/methods.js';

/** Formats rows as left-aligned columns. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** A pane's state in words: `running`, `exited 3`, `killed (SIGTERM)`. */
function paneState(pane: PaneInfo): string {
  if (pane.alive) return 'running';
  if (pane.signal) return `killed (${pane.signal})`;
  return `exited ${pane.exit_code ?? '?'}`;
}

/** The `ls` table. */
export function paneTable(panes: PaneInfo[]): string {
  return table(
    ['ID', 'TITLE', 'AGENT', 'STATE', 'PID', 'SIZE', 'COMMAND'],
    panes.map((p) => [p.pane_id, p.title, p.agent?.name ?? '-', paneState(p), p.pid ? String(p.pid) : '-', `${p.cols}x${p.rows}`, p.command]),
  );
}
