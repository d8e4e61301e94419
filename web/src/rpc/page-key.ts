/**
 * The page key: the second half of the dashboard login (the cookie is the first). The login
 * redirect hands it over in the URL fragment, which the browser never sends to a server; it is kept
 * in this origin's storage, which no page on another port can read (cookies, by contrast, are shared
 * by every port of 127.0.0.1). Sockets present it as a subprotocol, exports as a query parameter.
 */
const STORAGE_KEY = 'switchboard.key';
const FRAGMENT = /^#key=([\w-]+)$/;

/** Moves a key from the URL fragment into storage and takes it out of the address bar. */
export function adoptKeyFromFragment(): void {
  const match = FRAGMENT.exec(window.location.hash);
  if (!match?.[1]) return;
  window.localStorage.setItem(STORAGE_KEY, match[1]);
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
}

export function pageKey(): string {
  return window.localStorage.getItem(STORAGE_KEY) ?? '';
}

/** What every WebSocket offers: the protocol the server picks, and the key. */
export function socketProtocols(): string[] {
  return ['switchboard', `sb-key.${pageKey()}`];
}

/** A same-origin API URL with the key added (for links such as the export, which cannot set headers). */
export function withKey(path: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}key=${encodeURIComponent(pageKey())}`;
}
