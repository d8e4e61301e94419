import { describe, expect, it } from 'vitest';
import { daemonEnv, dropDaemonEnv } from './daemon-flags.js';

describe('the environment of a daemon process', () => {
  it('adds a malloc arena bound that the daemon takes out again, so no pane inherits it', () => {
    const env = daemonEnv({ PATH: '/bin' });
    expect(env.MALLOC_ARENA_MAX).toBe('2');
    dropDaemonEnv(env);
    expect(env).toEqual({ PATH: '/bin' });
  });

  it("keeps the user's own value, in the daemon and in its panes", () => {
    const env = daemonEnv({ MALLOC_ARENA_MAX: '4' });
    expect(env).toEqual({ MALLOC_ARENA_MAX: '4' });
    dropDaemonEnv(env);
    expect(env).toEqual({ MALLOC_ARENA_MAX: '4' });
  });
});
