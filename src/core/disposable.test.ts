import { describe, expect, it } from 'vitest';
import { DisposableStore, toDisposable } from './disposable.js';

describe('DisposableStore', () => {
  it('disposes newest first, once, and disposes what is added after it was disposed at once', () => {
    const order: string[] = [];
    const store = new DisposableStore();
    store.addAll(toDisposable(() => order.push('a')), toDisposable(() => order.push('b')));
    store.dispose();
    store.dispose();
    expect(order).toEqual(['b', 'a']);
    store.add(toDisposable(() => order.push('late')));
    expect(order).toEqual(['b', 'a', 'late']);
    expect(store.isDisposed).toBe(true);
  });

  it('clear() disposes what it holds and stays open for more, as a respawned pane needs', () => {
    const order: string[] = [];
    const store = new DisposableStore();
    store.add(toDisposable(() => order.push('first program')));
    store.clear();
    expect(order).toEqual(['first program']);
    store.add(toDisposable(() => order.push('second program')));
    expect(order).toEqual(['first program']);
    expect(store.isDisposed).toBe(false);
    store.dispose();
    expect(order).toEqual(['first program', 'second program']);
  });

  it('disposes every item even when one throws, and rethrows the first error', () => {
    const order: string[] = [];
    const store = new DisposableStore();
    store.add(toDisposable(() => order.push('a')));
    store.add(toDisposable(() => { throw new Error('boom'); }));
    expect(() => store.dispose()).toThrow('boom');
    expect(order).toEqual(['a']);
  });
});
