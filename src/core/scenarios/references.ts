/** References in scenario files: `${step.path}` to an earlier step's result, found in a value and replaced. */

/** `${name}` or `${name.path.to.field}` (array items by index: `${payment.cashIns.0.total}`). */
const REFERENCE = /\$\{([A-Za-z_][\w-]*)((?:\.[\w-]+)*)\}/g;
const WHOLE_REFERENCE = /^\$\{([A-Za-z_][\w-]*)((?:\.[\w-]+)*)\}$/;

/** The names every reference inside a JSON value points at. */
export function referencedNames(value: unknown): string[] {
  if (typeof value === 'string') return [...value.matchAll(REFERENCE)].map((match) => match[1]!);
  if (Array.isArray(value)) return value.flatMap(referencedNames);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(referencedNames);
  return [];
}

export const hasReference = (value: unknown): boolean => referencedNames(value).length > 0;

/** What a step names with `${...}`: the results of earlier named steps, and the receiver. */
export type Scope = Record<string, unknown>;

/** A reference that points at nothing when its step runs. */
export class ScenarioReferenceError extends Error {}

function resolve(scope: Scope, name: string, path: string): unknown {
  let value: unknown = scope[name];
  for (const key of path.split('.').slice(1)) {
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  }
  if (value === undefined) throw new ScenarioReferenceError(`\${${name}${path}} is undefined`);
  return value;
}

/**
 * A value with its references replaced. A string that is one reference and nothing else takes the value as it is
 * (a number stays a number); references inside longer strings are spliced in as text.
 */
export function interpolate<T>(value: T, scope: Scope): T {
  if (typeof value === 'string') {
    const whole = WHOLE_REFERENCE.exec(value);
    if (whole) return resolve(scope, whole[1]!, whole[2]!) as T;
    return value.replace(REFERENCE, (_match, ref: string, path: string) => {
      const found = resolve(scope, ref, path);
      return typeof found === 'string' ? found : JSON.stringify(found);
    }) as T;
  }
  if (Array.isArray(value)) return value.map((item) => interpolate(item, scope)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolate(item, scope)])) as T;
  }
  return value;
}
