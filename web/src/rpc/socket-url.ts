/** The WebSocket URL of a path on the page's own origin (the server accepts same-origin sockets only). */
export function socketUrl(path: string): string {
  const scheme = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${window.location.host}${path}`;
}
