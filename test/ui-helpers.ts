import type { render } from 'ink-testing-library';
import { eventually } from './helpers.js';

export const KEY = {
  enter: '\r',
  tab: '\t',
  up: '\x1b[A',
  down: '\x1b[B',
  right: '\x1b[C',
  backspace: '\x7f',
  esc: '\x1b',
  ctrlU: '\x15',
} as const;

type Rendered = ReturnType<typeof render>;

/** ink subscribes a view's key handler in an effect, just after the view shows: a person is never that fast. */
const pause = () => new Promise((resolve) => setTimeout(resolve, 50));

/**
 * Types into an ink app on ink-testing-library's fake terminal, each key its own chunk as a person types: each
 * once ink listens (it stops while a form's request is on its way), with pauses for its effects to run (a lone
 * escape is only known to be one on the next turn of the event loop).
 */
export function keyboard(app: Rendered) {
  return async (...keys: string[]) => {
    for (const key of keys) {
      await pause();
      await eventually(() => app.stdin.listenerCount('readable') > 0, 5000, 'the app to take keys');
      app.stdin.write(key);
    }
    await pause();
  };
}

/** The last frame, once `pattern` is on it. */
export const screenWith = (app: Rendered, pattern: RegExp | string, timeoutMs = 10_000): Promise<string> =>
  eventually(
    () => {
      const frame = app.lastFrame() ?? '';
      return (typeof pattern === 'string' ? frame.includes(pattern) : pattern.test(frame)) ? frame : '';
    },
    timeoutMs,
    `${pattern} on the screen`,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; the screen:\n${app.lastFrame()}`);
  });
