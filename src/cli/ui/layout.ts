import { useStdout } from 'ink';
import { useEffect, useState } from 'react';

export interface Size {
  columns: number;
  rows: number;
}

/** The terminal's size, following resizes; 80x24 when the output is no terminal (tests). */
export function useTerminalSize(): Size {
  // ink types its stdout as any writable stream: a terminal's also has columns and rows.
  const stdout: NodeJS.WritableStream & { columns?: number; rows?: number } = useStdout().stdout;
  const read = (): Size => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const resized = () => setSize(read());
    stdout.on('resize', resized);
    return () => {
      stdout.off('resize', resized);
    };
  }, [stdout]);
  return size;
}

/** Rows of each pane's list (titles and column headers come on top). */
export interface Layout {
  /** Lines between the header and the status line. */
  body: number;
  payments: number;
  clients: number;
  feed: number;
}

/** Lines outside the panes: the header, the status line and the help line. */
const CHROME = 3;
/** Title and column header of the two lists, title of the feed. */
const PANE_HEADS = 5;

/**
 * How the screen's rows are shared. One row stays free: an ink frame as tall as the terminal is redrawn from a
 * cleared screen on every change, which flickers.
 */
export function layoutOf(rows: number): Layout {
  const body = Math.max(rows - 1 - CHROME, PANE_HEADS + 3);
  const lists = body - PANE_HEADS;
  const payments = Math.max(Math.round(lists * 0.4), 1);
  const clients = Math.max(Math.round(lists * 0.2), 1);
  return { body, payments, clients, feed: Math.max(lists - payments - clients, 1) };
}

/**
 * The first row of a window of `rows` rows over `length` that shows `position`, moved as little as it can from
 * `top`: selections scroll the window line by line, and a full window is shown whenever there is enough.
 */
export function scrolled(top: number, position: number, rows: number, length: number): number {
  let next = Math.min(top, position);
  if (position >= next + rows) next = position - rows + 1;
  return Math.max(Math.min(next, length - rows), 0);
}
