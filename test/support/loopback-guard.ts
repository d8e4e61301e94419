import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { findProcessesByEnv } from '../../src/platform/index.js';

/** "0100007F:1F90" (tcp) or 32 hex digits (tcp6) → "127.0.0.1:8080" / "[::1]:8080". */
function decodeAddress(hex: string): string {
  const [ipHex = '', portHex = '0'] = hex.split(':');
  const port = Number.parseInt(portHex, 16);
  if (ipHex.length === 8) {
    const bytes = (ipHex.match(/../g) ?? []).map((b) => Number.parseInt(b, 16)).reverse();
    return `${bytes.join('.')}:${port}`;
  }
  // IPv6: four 32-bit words, each little-endian.
  const words = (ipHex.match(/.{8}/g) ?? []).map((w) => (w.match(/../g) ?? []).reverse().join(''));
  const groups = words.join('').match(/.{4}/g) ?? [];
  return `[${groups.map((g) => g.replace(/^0+(?=.)/, '')).join(':')}]:${port}`;
}

function isLoopbackOrUnconnected(address: string): boolean {
  return (
    address.startsWith('127.') ||
    address.startsWith('0.0.0.0:') ||
    address.startsWith('[0:0:0:0:0:0:0:1]') ||
    address.startsWith('[0:0:0:0:0:0:0:0]') ||
    address.startsWith('[0:0:0:0:0:ffff:7f')
  );
}

/**
 * Watches the sockets of every process in a pane (found by its SWITCHBOARD_PANE_ID marker) while a
 * test runs, and collects the remote addresses they were connected to: the evidence that an agent
 * talked to nothing but 127.0.0.1. Linux only; sampled every 50 ms.
 */
export class LoopbackGuard {
  private readonly remotes = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private samples = 0;

  constructor(private readonly paneId: string) {
    this.timer = setInterval(() => this.sample(), 50);
  }

  /** Remote addresses other than loopback that the pane's processes were connected to. */
  get outside(): string[] {
    return [...this.remotes].filter((a) => !isLoopbackOrUnconnected(a));
  }

  get sampleCount(): number {
    return this.samples;
  }

  /** Every remote address seen. */
  get seen(): string[] {
    return [...this.remotes];
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }

  sample(): void {
    if (process.platform !== 'linux') return;
    this.samples += 1;
    const inodes = new Set<string>();
    for (const pid of findProcessesByEnv('SWITCHBOARD_PANE_ID', this.paneId)) {
      let fds: string[];
      try {
        fds = readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
          if (m?.[1]) inodes.add(m[1]);
        } catch {
          // closed meanwhile
        }
      }
    }
    if (inodes.size === 0) return;
    for (const table of ['tcp', 'tcp6', 'udp', 'udp6']) {
      let text: string;
      try {
        text = readFileSync(`/proc/net/${table}`, 'utf8');
      } catch {
        continue;
      }
      for (const line of text.split('\n').slice(1)) {
        const cols = line.trim().split(/\s+/);
        const remote = cols[2];
        const inode = cols[9];
        if (remote && inode && inodes.has(inode)) this.remotes.add(decodeAddress(remote));
      }
    }
  }
}
