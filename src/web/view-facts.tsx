import { labelOf } from './labels.js';
import { Facts } from './ui.js';

/**
 * The fields of a view that its page shows nowhere else (`shown` names those), each labelled from its name, in the
 * view's order: a field added to a view shows here with no line in the page. An object or a list is left out.
 */
export function OtherFacts<T extends object>({ view, shown }: { view: T; shown: readonly (keyof T & string)[] }) {
  const isShown = (name: string) => (shown as readonly string[]).includes(name);
  const plain = Object.entries(view).filter(
    ([name, value]) => !isShown(name) && (value === null || typeof value !== 'object'),
  );
  return <Facts items={plain.map(([name, value]) => [labelOf(name), value === null ? null : String(value)])} />;
}
