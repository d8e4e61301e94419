import { describe, expect, it } from 'vitest';
import { SwitchboardError } from '../core/errors.js';
import { UsageError } from './args.js';
import { oneLine, reportFailure, wantsHelp, wantsJson } from './failure.js';

function capture(): { streams: { stdout: { write(t: string): void }; stderr: { write(t: string): void } }; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { streams: { stdout: { write: (t) => out.push(t) }, stderr: { write: (t) => err.push(t) } }, out, err };
}

describe('CLI failures', () => {
  it('reads --json and --help only before --', () => {
    expect(wantsJson(['ls', '--json'])).toBe(true);
    expect(wantsJson(['--', 'prog', '--json'])).toBe(false);
    expect(wantsHelp(['-h'])).toBe(true);
    expect(wantsHelp(['--', 'bash', '--help'])).toBe(false);
  });

  it('keeps a message with a screen on one line', () => {
    expect(oneLine('the agent exited (code 1); screen:\n  No, exit\n\n  Yes  \n')).toBe('the agent exited (code 1); screen: | No, exit | Yes');
    expect(oneLine('x'.repeat(1000)).length).toBe(400);
  });

  it('reports an error as one stderr line and, with --json, a JSON result with its code', () => {
    const c = capture();
    expect(reportFailure(c.streams, new SwitchboardError('PANE_NOT_FOUND', 'pane not found: w1', { pane_id: 'w1' }), { name: 'read', json: true })).toBe(1);
    expect(c.err).toEqual(['switchboard: pane not found: w1\n']);
    expect(JSON.parse(c.out.join(''))).toEqual({ status: 'error', error: { code: 'PANE_NOT_FOUND', message: 'pane not found: w1', details: { pane_id: 'w1' } } });
  });

  it('reports a usage mistake with exit 64 and where the help is; anything else thrown is INTERNAL_ERROR', () => {
    const usage = capture();
    expect(reportFailure(usage.streams, new UsageError('missing PANE'), { name: 'send', json: false })).toBe(64);
    expect(usage.err).toEqual(['switchboard send: missing PANE (see switchboard send --help)\n']);
    expect(usage.out).toEqual([]);
    const bug = capture();
    expect(reportFailure(bug.streams, new TypeError('boom'), { name: 'ls', json: true })).toBe(1);
    expect(JSON.parse(bug.out.join(''))).toMatchObject({ error: { code: 'INTERNAL_ERROR', message: 'boom' } });
  });
});
