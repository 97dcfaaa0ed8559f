import { Box, Text } from 'ink';
import { type Column, pad, table } from '../render.js';

export interface PaneProps {
  title: string;
  /** The pane the keys act on: its title bar and selected line are shown inverted. */
  focused: boolean;
  width: number;
  /** A column header, when the lines are a table. */
  header?: string;
  lines: string[];
  /** The index in `lines` of the selected line, if any. */
  selected: number | null;
  /** Rows for the lines; the pane keeps them even when it has fewer lines. */
  rows: number;
  /** Said in place of the lines when there are none. */
  empty: string;
}

/** A titled list of at most `rows` lines: the windows of the lists and the feed all render through it. */
export function Pane({ title, focused, width, header, lines, selected, rows, empty }: PaneProps) {
  return (
    <Box flexDirection="column" width={width} height={rows + (header === undefined ? 1 : 2)} flexShrink={0}>
      <Text bold inverse={focused} wrap="truncate-end">
        {pad(` ${title}`, width)}
      </Text>
      {header !== undefined && <Text wrap="truncate-end">{`  ${header}`}</Text>}
      {lines.length === 0 && (
        <Text dimColor wrap="truncate-end">
          {`  ${empty}`}
        </Text>
      )}
      {lines.slice(0, rows).map((line, i) => (
        // Selection shows by the marker too, so it stays visible without colours or attributes.
        <Text key={i} inverse={focused && i === selected} wrap="truncate-end">
          {`${i === selected ? '>' : ' '} ${line}`}
        </Text>
      ))}
    </Box>
  );
}

/** A page of a list of the API: the items from `offset` on, out of `total`. */
export interface ListWindow<T> {
  items: T[];
  offset: number;
  total: number;
}

export interface ListPaneProps<T> extends Pick<PaneProps, 'focused' | 'width' | 'rows' | 'empty'> {
  /** The list's name, plural: "VA payments". */
  name: string;
  window: ListWindow<T> | null;
  columns: Column<T>[];
  /** Index of the selected item in the whole list. */
  selected: number;
}

/** A window of an API list as a table, the CLI's own, titled with which items of how many it shows. */
export function ListPane<T>({ name, window, columns, selected, ...pane }: ListPaneProps<T>) {
  const items = window?.items ?? [];
  const [header = '', ...lines] = items.length === 0 ? [] : table(items, columns).split('\n');
  const where =
    window === null
      ? 'loading…'
      : items.length === 0
        ? `0 of ${window.total}`
        : `${window.offset + 1}-${window.offset + items.length} of ${window.total}`;
  return (
    <Pane
      {...pane}
      title={`${name}  ${where}`}
      header={header}
      lines={lines}
      selected={window === null ? null : selected - window.offset}
    />
  );
}
