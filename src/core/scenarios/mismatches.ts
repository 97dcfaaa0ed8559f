/** How a step's answer differs from what a scenario expects of it. */

const show = (value: unknown): string => {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
};

/**
 * How `actual` differs from `expected`, one "path: expected X, got Y" each: objects match on the keys they give,
 * arrays item by item and in length, everything else exactly. Empty when it matches.
 */
export function mismatches(expected: unknown, actual: unknown, path = ''): string[] {
  const at = path || '(value)';
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${at}: expected an array, got ${show(actual)}`];
    const problems = expected.flatMap((item, i) => mismatches(item, actual[i], `${path}[${i}]`));
    if (expected.length !== actual.length)
      problems.unshift(`${at}: expected ${expected.length} items, got ${actual.length}`);
    return problems;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return [`${at}: expected an object, got ${show(actual)}`];
    return Object.entries(expected).flatMap(([key, item]) =>
      mismatches(item, (actual as Record<string, unknown>)[key], path ? `${path}.${key}` : key),
    );
  }
  return expected === actual ? [] : [`${at}: expected ${show(expected)}, got ${show(actual)}`];
}
