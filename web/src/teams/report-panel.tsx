/**
 * A team run's report (markdown, from the daemon): read here, copied, or downloaded as a file.
 * Loaded when opened and again on request: the planner's draft changes while the run goes.
 */
import { useCallback, useEffect, useState } from 'react';
import { errorMessage } from '../rpc/rpc-client.js';
import { useDashboard } from '../ui/dashboard-context.js';

export function ReportPanel({ runId }: { runId: string }) {
  const { rpc, toasts } = useDashboard();
  const [markdown, setMarkdown] = useState<string | null>(null);
  const load = useCallback(() => {
    rpc.call('team_run_report', { run_id: runId }).then(
      (r) => setMarkdown(r.markdown),
      (error: unknown) => toasts.error(`Could not read the report: ${errorMessage(error)}`),
    );
  }, [rpc, toasts, runId]);
  useEffect(load, [load]);

  const copy = (): void => {
    if (markdown === null) return;
    navigator.clipboard.writeText(markdown).then(
      () => toasts.info('Report copied'),
      (error: unknown) => toasts.error(`Could not copy: ${errorMessage(error)}`),
    );
  };
  const download = (): void => {
    if (markdown === null) return;
    const url = URL.createObjectURL(new Blob([markdown], { type: 'text/markdown' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = `${runId}-report.md`;
    link.click();
    URL.revokeObjectURL(url);
  };
  return (
    <section className="team-report" data-testid="team-report">
      <div className="team-row-actions">
        <button type="button" className="icon-button" data-testid="report-reload" onClick={load}>
          reload
        </button>
        <button type="button" className="icon-button" data-testid="report-copy" disabled={markdown === null} onClick={copy}>
          copy
        </button>
        <button type="button" className="icon-button" data-testid="report-download" disabled={markdown === null} onClick={download}>
          download
        </button>
      </div>
      <pre className="team-report-text" data-testid="report-text">
        {markdown ?? 'Loading…'}
      </pre>
    </section>
  );
}
