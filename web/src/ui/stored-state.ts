/**
 * React state kept in this origin's localStorage, so the layout a user arranged (columns, pane
 * order, the maximized pane) survives a reload. What is stored is checked on the way in: storage
 * is shared by every page of the origin and may hold anything.
 */
import { useState } from 'react';

export function useStoredState<T>(key: string, fallback: T, valid: (value: unknown) => value is T): [T, (next: T) => void] {
  const [value, setValue] = useState<T>(() => {
    try {
      const stored: unknown = JSON.parse(window.localStorage.getItem(key) ?? 'null');
      return valid(stored) ? stored : fallback;
    } catch {
      return fallback;
    }
  });
  const set = (next: T): void => {
    setValue(next);
    window.localStorage.setItem(key, JSON.stringify(next));
  };
  return [value, set];
}

export const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
export const isStringOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
export const isColumnCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 4;
