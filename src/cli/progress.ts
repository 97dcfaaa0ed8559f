import type { ProgressView } from '../sandbox/runtime/index.js';

/** Work shorter than this shows no line at all. */
const SHOW_AFTER_MS = 1000;
/** How often the line is updated (and the sandbox asked how its work stands). */
const EVERY_MS = 250;

/**
 * Whether long work may show a progress line: only on a terminal's stderr, and not with `--json` or `--quiet`, nor in
 * CI (a `CI` variable set to anything but `0` or `false`), where a line redrawn in place makes a log unreadable.
 */
export function progressWanted(quiet: boolean, stream: NodeJS.WriteStream = process.stderr): boolean {
  const ci = process.env.CI;
  return stream.isTTY === true && !quiet && (ci === undefined || ci === '' || /^(0|false)$/i.test(ci));
}

const count = (n: number): string => Math.round(n).toLocaleString('en-US');
const seconds = (ms: number): string =>
  ms < 60_000
    ? `${Math.max(1, Math.round(ms / 1000))} s`
    : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;

/** `clock advance: 45% (540 of 1,200 sandbox seconds), about 6 s left`; with nothing to measure, the time it has run. */
export function progressText({ what, done, total, unit, elapsedMs }: ProgressView): string {
  if (total <= 0) return `${what}: ${seconds(elapsedMs)} so far`;
  // Counted all, it may still have work it does not count (an import's writes): it says so rather than guess.
  const left =
    done >= total
      ? 'finishing'
      : done > 0
        ? `about ${seconds((elapsedMs * (total - done)) / done)} left`
        : 'working out the time left';
  return `${what}: ${Math.floor((done / total) * 100)}% (${count(done)} of ${count(total)} ${unit}), ${left}`;
}

/**
 * One line on `stream`, redrawn in place (carriage return, erase the line) and cut to the terminal's width so it never
 * wraps; `clear()` erases it, so what the command prints next starts on a clean line.
 */
function progressLine(stream: NodeJS.WriteStream = process.stderr) {
  let shown = false;
  return {
    show(view: ProgressView): void {
      const width = (stream.columns || 80) - 1;
      stream.write(`\r\x1b[K${progressText(view).slice(0, width)}`);
      shown = true;
    },
    clear(): void {
      if (shown) stream.write('\r\x1b[K');
      shown = false;
    },
  };
}

/**
 * Runs `work`, and if it takes longer than a second and `wanted`, shows how it stands (asked of `sample` every
 * 250 ms: the sandbox's `GET /sandbox/v1/progress`, or what a download received) until it settles.
 */
export async function withProgress<T>(
  wanted: boolean,
  sample: () => Promise<ProgressView | null> | ProgressView | null,
  work: Promise<T>,
): Promise<T> {
  if (!wanted) return work;
  const line = progressLine();
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  const next = (ms: number) => {
    timer = setTimeout(async () => {
      const view = await Promise.resolve(sample()).catch(() => null);
      if (settled) return;
      if (view) line.show(view);
      next(EVERY_MS);
    }, ms);
    timer.unref();
  };
  next(SHOW_AFTER_MS);
  try {
    return await work;
  } finally {
    settled = true;
    clearTimeout(timer);
    line.clear();
  }
}

/** How the account's long work stands, as the sandbox says (`GET /sandbox/v1/progress`). */
export const sandboxProgress =
  (client: { call<T>(method: string, path: string): Promise<{ data: T }> }) => async (): Promise<ProgressView | null> =>
    (await client.call<ProgressView | null>('GET', '/sandbox/v1/progress')).data;

/**
 * For `va-sandbox start`: the server's own long work (a migration at start, a retention sweep), told as it goes,
 * drawn as the same line once it has run a second; undefined when no line is wanted.
 */
export function serverWorkLine(wanted: boolean): ((view: ProgressView | null) => void) | undefined {
  if (!wanted) return undefined;
  const line = progressLine();
  let drawn = -Infinity;
  return (view) => {
    if (view === null) return line.clear();
    const now = performance.now();
    if (view.elapsedMs < SHOW_AFTER_MS || now - drawn < EVERY_MS) return;
    drawn = now;
    line.show(view);
  };
}
