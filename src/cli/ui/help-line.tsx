import { Text } from 'ink';
import { Fragment } from 'react';

/** A key and what it does. */
export type Key = [key: string, action: string];

/** The keys that work now, one line: the key in bold, then what it does. */
export function HelpLine({ keys }: { keys: Key[] }) {
  return (
    <Text wrap="truncate-end">
      {keys.map(([key, action], i) => (
        <Fragment key={key}>
          {i === 0 ? ' ' : '  '}
          <Text bold>{key}</Text> {action}
        </Fragment>
      ))}
    </Text>
  );
}
