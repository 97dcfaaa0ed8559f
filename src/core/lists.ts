import { newestFirst, pageNewestFirst, paginate } from './pagination.js';
import type { ListQuery } from './schemas.js';
import { push } from './account-context.js';

/**
 * The ids of a table's records in groups by what lists filter on (`status:completed`, `clientTaxId:...`), each
 * group in the order the records were made, so a filtered list reads its group rather than the table. Kept by the
 * code that owns the records: `made` when one is made, `add` and `remove` as its grouped fields change.
 */
export class Lists {
  /** Each record's place in the order records were made. */
  private readonly order = new Map<string, number>();
  private readonly count = { n: 0 };
  private readonly groups = new Map<string, string[]>();
  /**
   * How many ids at the start of a group have left it but are still in its array: the oldest leave first as a rule
   * (payments expire in the order they were made), and taking each out of a long array moved every id after it
   * (V8 shifts only short arrays in place): 300,000 expiries took minutes. They are cut off once half the array, or
   * when the group is read.
   */
  private readonly heads = new Map<string, number>();

  made(id: string): void {
    this.order.set(id, this.count.n++);
  }

  add(group: string, id: string): void {
    // Records are mostly grouped as they are made: the newest made goes at the end, with no search.
    const n = this.order.get(id)!;
    if (n === this.count.n - 1) return push(this.groups, group, id);
    const list = this.groups.get(group) ?? [];
    if (list.length === (this.heads.get(group) ?? 0) || this.order.get(list.at(-1)!)! < n) list.push(id);
    else list.splice(this.place(group, list, id), 0, id);
    this.groups.set(group, list);
  }

  remove(group: string, id: string): void {
    const list = this.groups.get(group) ?? [];
    const head = this.heads.get(group) ?? 0;
    const at = this.place(group, list, id);
    if (list[at] !== id) return;
    if (list.length - head === 1) {
      this.groups.delete(group);
      this.heads.delete(group);
    } else if (at > head) {
      list.splice(at, 1);
      this.groups.set(group, list);
    } else if (head + 1 < list.length / 2) this.heads.set(group, head + 1);
    else this.cut(group, list, head + 1);
  }

  /** The ids of a group, oldest first. */
  group(group: string): readonly string[] {
    const list = this.groups.get(group) ?? [];
    const head = this.heads.get(group);
    if (head !== undefined) this.cut(group, list, head);
    return list;
  }

  /** Takes the ids that left a group from the start of its array, at once. */
  private cut(group: string, list: string[], head: number): void {
    list.splice(0, head);
    this.groups.set(group, list);
    this.heads.delete(group);
  }

  /** The ids of any of `groups`, oldest first. */
  anyOf(groups: readonly string[]): readonly string[] {
    const unique = [...new Set(groups)];
    if (unique.length === 1) return this.group(unique[0]!);
    return [...this.newestOf(unique)].reverse();
  }

  /** How many ids any of `groups` holds. */
  sizeOf(groups: readonly string[]): number {
    return [...new Set(groups)].reduce((size, group) => size + this.group(group).length, 0);
  }

  /**
   * The ids of any of `groups`, newest first, read only as far as they are asked for: each group is already in the
   * order records were made, so they are merged from their ends, never sorted.
   */
  *newestOf(groups: readonly string[]): Generator<string> {
    const lists = [...new Set(groups)].map((group) => this.group(group));
    const at = lists.map((ids) => ids.length - 1);
    const made = (i: number) => (at[i]! < 0 ? -1 : this.order.get(lists[i]![at[i]!]!)!);
    const heads = lists.map((_, i) => made(i));
    for (;;) {
      let next = 0;
      for (let i = 1; i < lists.length; i++) if (heads[i]! > heads[next]!) next = i;
      if (heads[next]! < 0) return;
      yield lists[next]![at[next]!--]!;
      heads[next] = made(next);
    }
  }

  /** Where `id` is or would go in a group's array (after the ids that left it): a binary search by the order made. */
  private place(group: string, list: readonly string[], id: string): number {
    const n = this.order.get(id)!;
    let low = this.heads.get(group) ?? 0;
    let high = list.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.order.get(list[mid]!)! < n) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/** The narrowest of a list's candidate groups; null when there are none. */
function narrowest(groups: (readonly string[])[]): readonly string[] | null {
  let best: readonly string[] | null = null;
  for (const ids of groups) if (best === null || ids.length < best.length) best = ids;
  return best;
}

/** Moves a record between groups: `made` and grouped when new (`before` undefined), else out of the groups it left. */
export function regroup(lists: Lists, id: string, groups: string[], before: string[] | undefined): void {
  if (before === undefined) lists.made(id);
  for (const group of before ?? []) if (!groups.includes(group)) lists.remove(group, id);
  for (const group of groups) if (!before?.includes(group)) lists.add(group, id);
}

/**
 * A filtered list: read from the narrowest group its filters name (each group is exactly the records one filter
 * matches), checking the other filters on its records only; the table newest first when no filter has a group.
 * `ranges` are the filters without a group (a created range): null when not asked.
 */
export function filtered<T, U>(
  table: Record<string, T>,
  groups: (readonly string[] | undefined)[],
  ranges: (number | null)[],
  matches: (record: T) => boolean,
  query: ListQuery,
  render: (record: T) => U,
) {
  const named = groups.filter((ids): ids is readonly string[] => ids !== undefined);
  const narrow = narrowest(named);
  if (narrow === null) return paginate(newestFirst(table).filter(matches), query, render);
  const alone = named.length === 1 && ranges.every((bound) => bound === null);
  const ids = alone ? narrow : narrow.filter((id) => matches(table[id]!));
  return pageNewestFirst(ids, query, (id) => render(table[id]!));
}
