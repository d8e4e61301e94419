/**
 * The page key: the second half of the dashboard login (the cookie is the first). The login
 * redirect hands it over in the URL fragment, which the browser never sends to a server; it is kept
 * in this origin's storage, which no page on another port can read (cookies, by contrast, are shared
 * by every port of 127.0.0.1). Sockets present it as a subprotocol, API calls as a header; never in a
 * URL, which would carry it into history, logs and Referer headers.
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

/** The header that carries the key on API calls. */
const KEY_HEADER = 'x-switchboard-key';

/**
 * Downloads a same-origin API resource (an export) as `filename`: fetched with the key in its
 * header, then handed to the browser as a file. A plain link cannot set a header, and the key must
 * not go in its URL.
 */
export async function downloadWithKey(path: string, filename: string): Promise<void> {
  const res = await fetch(path, { headers: { [KEY_HEADER]: pageKey() } });
  if (!res.ok) throw new Error(`${res.status} ${(await res.text()).trim()}`);
  const url = URL.createObjectURL(await res.blob());
  try {
    const link = document.createElement('a');
    link.href = url;
    link.download = filename;
    link.click();
  } finally {
    // The click has handed the blob to the download by the time this runs in the next task.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }
}
