import { describe, expect, it } from 'vitest';
import { decideApproval, policyVerdict, type ApprovalChain } from './broker.js';
import { ASK_POLICY, AUTO_APPROVE_POLICY } from './policy/index.js';
import type { ApprovalRequest } from './request.js';

const context = { workdir: '/home/dev/work', home: '/home/dev', platform: 'linux' as const };

const request = (over: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
  id: 'p1-approval-1',
  source: { kind: 'screen', paneId: 'p1' },
  subject: { tool: 'file_write', path: '/home/dev/work/a.txt' },
  certain: true,
  doubts: [],
  ...over,
});

const chain = (over: Partial<ApprovalChain> = {}): ApprovalChain => ({ policy: AUTO_APPROVE_POLICY, context, otherwise: 'open', ...over });

describe('the chain of deciders', () => {
  it('the policy decides first, and nothing else is asked', async () => {
    let asked = 0;
    const outcome = await decideApproval(request(), chain({ callback: { name: 'onApproval', decide: () => (asked++, 'deny'), onError: 'throw' } }));
    expect(outcome).toMatchObject({ decision: 'allow', decidedBy: 'policy' });
    expect(asked).toBe(0);
  });

  it('what the policy leaves open goes to the callback, in its own words', async () => {
    const outcome = await decideApproval(request(), chain({ policy: ASK_POLICY, callback: { name: 'onApproval', decide: () => 'allow', onError: 'throw' } }));
    expect(outcome.decision).toBe('allow');
    expect(outcome.decidedBy).toBe('callback');
    expect(outcome.reason).toMatch(/^allowed by the onApproval callback \(policy: /);
  });

  it('a callback that throws denies, or throws, as the chain says', async () => {
    const failing = { name: 'onPermission', decide: (): 'allow' => { throw new Error('judge down'); } };
    const denied = await decideApproval(request(), chain({ policy: ASK_POLICY, callback: { ...failing, onError: 'deny' } }));
    expect(denied).toMatchObject({ decision: 'deny', decidedBy: 'default', reason: 'denied: the onPermission callback failed (judge down)' });
    await expect(decideApproval(request(), chain({ policy: ASK_POLICY, callback: { ...failing, onError: 'throw' } }))).rejects.toThrow('judge down');
  });

  it('with no callback, a person answers; a request that went away is withdrawn', async () => {
    const allowed = await decideApproval(request(), chain({ policy: ASK_POLICY, person: () => Promise.resolve('allow') }));
    expect(allowed).toMatchObject({ decision: 'allow', decidedBy: 'person' });
    const gone = await decideApproval(request(), chain({ policy: ASK_POLICY, person: () => Promise.resolve(null) }));
    expect(gone).toMatchObject({ decision: 'withdrawn', decidedBy: 'none' });
  });

  it('the end of the chain leaves the request open, or denies it', async () => {
    expect(await decideApproval(request(), chain({ policy: ASK_POLICY, otherwise: 'open' }))).toMatchObject({ decision: 'ask', decidedBy: 'none' });
    const denied = await decideApproval(request(), chain({ policy: ASK_POLICY, otherwise: 'deny', missing: 'no onPermission callback' }));
    expect(denied).toMatchObject({ decision: 'deny', decidedBy: 'default' });
    expect(denied.reason).toMatch(/, and no one answers \(no onPermission callback\)$/);
  });
});

describe('an unsure read is only ever asked (issue 10)', () => {
  it('a request read with doubts is asked about even where the policy would allow it', () => {
    const verdict = policyVerdict(request({ certain: false, doubts: ['a row of the prompt is not part of any layout'] }), AUTO_APPROVE_POLICY, context);
    expect(verdict.decision).toBe('ask');
    expect(verdict.reason).toContain('could not be read with certainty (a row of the prompt is not part of any layout)');
  });

  it('a denial stands whatever the doubts', () => {
    const verdict = policyVerdict(request({ certain: false, doubts: ['cut'], subject: { tool: 'shell', command: 'rm -rf /', shell: 'posix' } }), AUTO_APPROVE_POLICY, context);
    expect(verdict.decision).toBe('deny');
  });

  it('a request that could not be read at all is asked', () => {
    expect(policyVerdict(request({ subject: null, certain: false }), AUTO_APPROVE_POLICY, context)).toMatchObject({ decision: 'ask', reason: 'asked: the approval prompt could not be parsed' });
  });

  it('an unsure read never reaches allow through the chain with no one to ask', async () => {
    const outcome = await decideApproval(request({ certain: false, doubts: ['cut'] }), chain({ otherwise: 'deny' }));
    expect(outcome).toMatchObject({ decision: 'deny', decidedBy: 'default' });
  });
});
