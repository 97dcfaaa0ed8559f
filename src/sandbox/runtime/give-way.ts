import type { Pause } from '../../core/account-export/account-export.js';

/** How long a long piece of work (a clock walk, an import) runs at a stretch before it lets other requests in (ms). */
export const SLICE_MS = 20;

/** A `Pause` for one piece of work: after each `SLICE_MS` of it, a turn of the event loop for everyone else. */
export function giveWay(): Pause {
  let since = performance.now();
  return () => {
    if (performance.now() - since < SLICE_MS) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}
