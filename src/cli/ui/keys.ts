import { type Key, useInput } from 'ink';

const CONTROL = /[\x00-\x1f\x7f]/;

/**
 * ink's `useInput`, one key at a time: ink hands over whole what came in one chunk (a paste, keys a fast terminal
 * or tmux sent together), tabs and enters inside it too. Handlers read their state from refs or updaters, as
 * keys of one chunk come before any render.
 */
export function useKeys(handler: (input: string, key: Key) => void, options: { isActive?: boolean } = {}): void {
  useInput((input, key) => {
    if (input.length <= 1) return handler(input, key);
    for (const char of input) {
      const control = CONTROL.test(char);
      handler(control ? '' : char, {
        ...key,
        tab: char === '\t',
        return: char === '\r',
        backspace: char === '\x7f' || char === '\b',
      });
    }
  }, options);
}
