/**
 * One pane's live terminal in the page: an xterm.js Terminal joined to the pane's socket, fitted
 * to its cell (and the pane resized to match), searchable, with the browser's copy and paste.
 * Plain TypeScript, so the React component only mounts and disposes it.
 */
import { FitAddon } from '@xterm/addon-fit';
import { SearchAddon } from '@xterm/addon-search';
import { Terminal } from '@xterm/xterm';
import { Emitter, type Unsubscribe } from '../rpc/emitter.js';
import type { ConnectionStatus } from '../rpc/reconnecting-socket.js';
import { PaneSocket } from './pane-socket.js';
import { SEARCH_DECORATIONS, TERMINAL_FONT, TERMINAL_THEME } from './theme.js';

export interface SearchResults {
  /** Index of the active match, -1 when there are too many to count. */
  index: number;
  count: number;
}

export class TerminalController {
  private readonly term: Terminal;
  private readonly fitAddon = new FitAddon();
  private readonly searchAddon = new SearchAddon();
  private readonly socket: PaneSocket;
  private readonly resizeObserver: ResizeObserver;
  private fitFrame: number | undefined;
  private readonly searched = new Emitter<SearchResults>();
  private readonly undo: (() => void)[] = [];

  constructor(
    paneId: string,
    private readonly host: HTMLElement,
    onError: (message: string) => void,
  ) {
    this.term = new Terminal({
      scrollback: 10_000,
      fontFamily: TERMINAL_FONT,
      fontSize: 13,
      theme: TERMINAL_THEME,
      cursorBlink: true,
      // Search highlights are decorations, which xterm still files under its proposed API.
      allowProposedApi: true,
    });
    this.term.loadAddon(this.fitAddon);
    this.term.loadAddon(this.searchAddon);
    this.term.attachCustomKeyEventHandler((event) => this.handleClipboardKeys(event));
    this.term.open(host);

    this.socket = new PaneSocket(paneId, {
      output: (bytes) => {
        // Acknowledged once xterm has parsed it: the server paces this pane by that.
        this.term.write(bytes, () => this.socket.processedOutput(bytes.length));
      },
      reset: () => {
        this.term.reset();
      },
      exit: (exitCode, signal) => {
        const how = signal ? `signal ${signal}` : `code ${exitCode ?? '?'}`;
        this.term.write(`\r\n\x1b[2m[process exited with ${how}]\x1b[0m\r\n`);
      },
      error: (message) => {
        onError(`Pane ${paneId}: ${message}`);
      },
    });

    const disposables = [
      this.term.onData((data) => {
        this.socket.sendText(data);
      }),
      this.term.onBinary((data) => {
        this.socket.sendBinary(data);
      }),
      // Fitting changes the size; the pane's PTY follows so programs lay out for what is shown.
      this.term.onResize(({ cols, rows }) => {
        this.socket.resize(cols, rows);
      }),
      this.searchAddon.onDidChangeResults(({ resultIndex, resultCount }) => {
        this.searched.fire({ index: resultIndex, count: resultCount });
      }),
    ];
    this.undo.push(() => {
      for (const d of disposables) d.dispose();
    });

    this.resizeObserver = new ResizeObserver(() => {
      this.scheduleFit();
    });
    this.resizeObserver.observe(host);
    this.fit();
  }

  get connection(): ConnectionStatus {
    return this.socket.status;
  }

  onConnection(listener: (status: ConnectionStatus) => void): Unsubscribe {
    return this.socket.onStatus(listener);
  }

  onSearchResults(listener: (results: SearchResults) => void): Unsubscribe {
    return this.searched.on(listener);
  }

  retryNow(): void {
    this.socket.retryNow();
  }

  focus(): void {
    this.term.focus();
  }

  /** Finds the next (or previous) match in the scrollback; false when there is none. */
  find(text: string, backwards = false): boolean {
    if (text === '') {
      this.clearSearch();
      return false;
    }
    const options = { decorations: SEARCH_DECORATIONS };
    return backwards ? this.searchAddon.findPrevious(text, options) : this.searchAddon.findNext(text, options);
  }

  clearSearch(): void {
    this.searchAddon.clearDecorations();
    this.term.clearSelection();
  }

  /** Fits the terminal to its cell now; a hidden cell (no size) is left alone until it shows. */
  fit(): void {
    if (this.host.clientWidth === 0 || this.host.clientHeight === 0) return;
    const proposed = this.fitAddon.proposeDimensions();
    if (!proposed || !Number.isFinite(proposed.cols) || !Number.isFinite(proposed.rows)) return;
    if (proposed.cols === this.term.cols && proposed.rows === this.term.rows) {
      // Unchanged, so xterm fires no resize; the pane may still not know this size (first fit).
      this.socket.resize(this.term.cols, this.term.rows);
      return;
    }
    this.fitAddon.fit();
  }

  dispose(): void {
    if (this.fitFrame !== undefined) window.cancelAnimationFrame(this.fitFrame);
    this.resizeObserver.disconnect();
    for (const u of this.undo) u();
    this.socket.dispose();
    this.term.dispose();
  }

  /** A burst of resize callbacks (dragging a window) is one fit, at the next frame. */
  private scheduleFit(): void {
    if (this.fitFrame !== undefined) return;
    this.fitFrame = window.requestAnimationFrame(() => {
      this.fitFrame = undefined;
      this.fit();
    });
  }

  /**
   * Which keys go to the browser instead of the program: Ctrl+C copies when text is selected
   * (and interrupts otherwise), Ctrl+V and Ctrl+Shift+V paste (xterm turns the browser's paste
   * event into input, bracketed when the program asked), Ctrl+Shift+C always copies.
   */
  private handleClipboardKeys(event: KeyboardEvent): boolean {
    if (event.type !== 'keydown' || event.altKey || !(event.ctrlKey || event.metaKey)) return true;
    if (event.code === 'KeyV') return false;
    if (event.code === 'KeyC' && event.shiftKey) {
      // Chrome opens its element picker on Ctrl+Shift+C; this terminal copies instead.
      event.preventDefault();
      this.copySelection();
      return false;
    }
    if (event.code === 'KeyC' && this.term.hasSelection()) {
      this.copySelection();
      event.preventDefault();
      return false;
    }
    return true;
  }

  private copySelection(): void {
    const text = this.term.getSelection();
    if (text === '') return;
    // The page is served from 127.0.0.1, a secure context, so the async clipboard is there.
    navigator.clipboard.writeText(text).catch(() => {
      // Denied (no user gesture the browser accepts): the selection stays for the context menu's copy.
    });
  }
}
