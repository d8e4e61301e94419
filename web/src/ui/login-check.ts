import { pageKey } from '../rpc/page-key.js';

/**
 * Whether this browser is still logged in. A WebSocket that the server refuses looks, from the
 * page, like any other failed connection; a plain request to the page's own origin says whether
 * the refusal was the session (the daemon restarted, so its sessions are gone) and retrying is
 * pointless until the user opens a new login link.
 */
export async function isLoggedOut(): Promise<boolean> {
  try {
    // The check needs the cookie and the page key, as the sockets do.
    const response = await fetch('/api/check', { cache: 'no-store', credentials: 'same-origin', headers: { 'x-switchboard-key': pageKey() } });
    return response.status === 401;
  } catch {
    // The daemon is not answering at all: that is a lost connection, not a lost session.
    return false;
  }
}
