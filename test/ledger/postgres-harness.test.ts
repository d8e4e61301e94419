/** The PostgreSQL test harness itself: a real server that answers, and nothing of it left after stop. */
import { existsSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isProcessRunning } from '../../src/platform/index.js';
import { startPostgres } from '../support/postgres-server.js';

describe('the PostgreSQL test harness', () => {
  it('starts a real server on loopback, gives fresh databases, and leaves no process or file once stopped', async () => {
    const server = await startPostgres();
    let pid: number | undefined;
    try {
      const url = await server.createDatabase();
      expect(new URL(url).hostname).toBe('127.0.0.1');
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
        const version = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version;
        expect(version).toMatch(/^\d+\.\d+/);
      } finally {
        await client.end();
      }
      expect(existsSync(`${server.dir}/.s.PGSQL.${server.port}`)).toBe(true);
      // The pid the harness signals is the postmaster's own (as root, `unshare` execs it rather than forking).
      expect(readFileSync(`${server.dir}/data/postmaster.pid`, 'utf8').split('\n')[0]).toBe(String(server.pid));
    } finally {
      await server.stop();
    }
    expect(existsSync(server.dir)).toBe(false);
    expect(isProcessRunning(server.pid)).toBe(false);
    // The backend that served the connection went with the server.
    if (pid !== undefined) expect(isProcessRunning(pid)).toBe(false);
  });
});
