/**
 * A list the daemon announces nothing about (sessions, runs, team runs), read while connected:
 * at once, every `everyMs`, and again on every reconnect. One toast per run of failures, not one
 * every poll; errors whose code is in `quiet` raise none (a daemon without the part: the list stays as it was).
 */
import { useEffect, useRef, useState } from 'react';
import { useDashboard } from '../ui/dashboard-context.js';
import { errorMessage, RpcError, type RpcClient } from './rpc-client.js';

export function usePolledList<T>(read: (rpc: RpcClient) => Promise<T[]>, what: string, everyMs: number, quiet: readonly string[] = []): T[] {
  const { rpc, toasts } = useDashboard();
  const [items, setItems] = useState<T[]>([]);
  // The latest reader, so a caller's inline function does not restart the polling every render.
  const reader = useRef(read);
  reader.current = read;
  // A key for the effect: the caller's array is new every render.
  const quietCodes = quiet.join(',');
  useEffect(() => {
    let reported = false;
    const load = (): void => {
      if (rpc.status.state !== 'open') return;
      reader.current(rpc).then(
        (result) => {
          reported = false;
          setItems(result);
        },
        (error: unknown) => {
          const code = error instanceof RpcError ? error.dataCode : undefined;
          if (reported || code === 'NOT_CONNECTED' || (code !== undefined && quietCodes !== '' && quietCodes.split(',').includes(code))) return;
          reported = true;
          toasts.error(`Could not list the ${what}: ${errorMessage(error)}`);
        },
      );
    };
    load();
    const timer = window.setInterval(load, everyMs);
    const stop = rpc.onOpen(load);
    return () => {
      window.clearInterval(timer);
      stop();
    };
  }, [rpc, toasts, what, everyMs, quietCodes]);
  return items;
}
