import { describe, expect, it } from 'vitest';
import { checkName, claimKey, controllerSubject, eventSubject, nodeControlSubject, nodeKey, nodePermissions, poolConsumer, workSubject } from './topology.js';

describe('cluster names', () => {
  it('puts every name under sb', () => {
    expect(workSubject('gpu')).toBe('sb.work.gpu');
    expect(poolConsumer('gpu')).toBe('pool_gpu');
    expect(eventSubject('node-a', 'run-1')).toBe('sb.events.node-a.run-1');
    expect(nodeControlSubject('node-a')).toBe('sb.node.node-a.ctl');
    expect(controllerSubject('node-a', 'ping')).toBe('sb.ctl.node-a.ping');
    expect(nodeKey('node-a')).toBe('node.node-a');
    expect(claimKey('gpu', 'run-1')).toBe('run.gpu.run-1');
  });

  it('refuses names that would reach into other subjects', () => {
    for (const bad of ['a.b', '*', '>', 'a b', '', 'x'.repeat(65), 'é']) {
      expect(() => checkName('node', bad)).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS', message: expect.stringContaining('is not usable on the cluster') }));
    }
    expect(() => workSubject('a.>')).toThrow(/pool 'a\.>'/);
    expect(checkName('run id', 'r'.repeat(128))).toHaveLength(128);
  });

  it("gives a node its own lease, subjects and inbox, and its pools' work only", () => {
    const perms = nodePermissions('node-a', ['main', 'gpu']);
    expect(perms.publish.allow).toContain('$KV.sb_nodes.node.node-a');
    expect(perms.publish.allow).toContain('$JS.API.CONSUMER.MSG.NEXT.SB_WORK.pool_gpu');
    // No consumer of its own making anywhere: one delivers wherever its maker says.
    expect(perms.publish.allow.join(' ')).not.toMatch(/node-b|STREAM\.CREATE|CONSUMER\.CREATE|\$JS\.API\.>/);
    // Its conversation shelf: written, and read by the stream API's get, its own only.
    expect(perms.publish.allow.filter((subject) => subject.includes('sb_conversations'))).toEqual(['$O.sb_conversations_node-a.>', '$JS.API.STREAM.MSG.GET.OBJ_sb_conversations_node-a', '$JS.API.STREAM.PURGE.OBJ_sb_conversations_node-a']);
    // No direct get at all: one answers with stored bytes on whatever subject its asker names. Its
    // lease, claims and cancel marks are read by the stream API's get; marks never written.
    expect(perms.publish.allow.join(' ')).not.toMatch(/DIRECT/);
    expect(perms.publish.allow).toContain('$JS.API.STREAM.MSG.GET.KV_sb_nodes');
    expect(perms.publish.allow).toContain('$JS.API.STREAM.MSG.GET.KV_sb_claims');
    expect(perms.publish.allow).not.toContain('$KV.sb_claims.cancel.*');
    // Claims of its own pools' runs only.
    expect(perms.publish.allow.filter((subject) => subject.includes('sb_claims.run'))).toEqual(['$KV.sb_claims.run.main.*', '$KV.sb_claims.run.gpu.*']);
    // Events under its own name only, published (the last one is the controller's to read back: last_event).
    expect(perms.publish.allow.filter((subject) => subject.includes('sb.events') || subject.includes('SB_EVENTS'))).toEqual(['sb.events.node-a.*']);
    expect(perms.subscribe.allow).toEqual(['_INBOX_node-a.>', 'sb.node.node-a.>']);
    expect(perms.allow_responses).toBe(true);
  });
});
