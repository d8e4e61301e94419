/**
 * Search in a pane's scrollback, floating over the terminal's top right corner (so it costs the
 * header no room): Enter finds the next match, Shift+Enter the previous one, Escape closes.
 */
import { useEffect, useRef, useState } from 'react';
import type { SearchResults, TerminalController } from './terminal-controller.js';

export function SearchBox({ controller, onClose }: { controller: TerminalController | null; onClose: () => void }) {
  const [text, setText] = useState('');
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
  }, []);
  const close = (): void => {
    controller?.clearSearch();
    onClose();
    controller?.focus();
  };
  const [results, setResults] = useState<SearchResults | null>(null);
  const [missed, setMissed] = useState(false);

  useEffect(() => controller?.onSearchResults(setResults), [controller]);

  const find = (backwards: boolean): void => {
    if (!controller) return;
    setMissed(text !== '' && !controller.find(text, backwards));
  };

  const counter = results && text !== '' && results.count > 0 ? `${results.index + 1}/${results.count}` : null;
  return (
    <div className={`search ${missed ? 'search-missed' : ''}`} data-testid="search">
      <input
        ref={input}
        type="text"
        className="search-input"
        data-testid="search-input"
        placeholder="search"
        value={text}
        onChange={(event) => {
          setText(event.target.value);
          setMissed(false);
          if (event.target.value === '') {
            controller?.clearSearch();
            setResults(null);
          }
        }}
        onKeyDown={(event) => {
          if (event.key === 'Enter') {
            event.preventDefault();
            find(event.shiftKey);
          } else if (event.key === 'Escape') {
            close();
          }
        }}
      />
      {counter && <span className="search-count" data-testid="search-count">{counter}</span>}
      <button type="button" className="icon-button" data-testid="search-prev" title="Previous match (Shift+Enter)" onClick={() => find(true)}>
        ↑
      </button>
      <button type="button" className="icon-button" data-testid="search-next" title="Next match (Enter)" onClick={() => find(false)}>
        ↓
      </button>
      <button type="button" className="icon-button" data-testid="search-close" title="Close (Escape)" onClick={close}>
        ×
      </button>
    </div>
  );
}
