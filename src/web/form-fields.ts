import type { z } from 'zod';
import { filled, jsonObjectOr, numberOr } from './pages/form-values.js';

/**
 * A create form's fields from the request schema the API validates with: each field of its shape, in its order, a
 * control by its type (a number, a choice, a JSON object, a comma-separated list, else text), labelled from its name.
 * A field added to a request schema shows in its form with no line here; `Control` says what a field needs beyond that.
 */
type Kind = 'text' | 'number' | 'choice' | 'json' | 'list';

/**
 * What a form says of a field beyond its schema (`SchemaFields`, schema-form.tsx): another label, a hint, the words
 * of its choices.
 */
export interface Control {
  label?: string;
  hint?: string;
  choices?: Record<string, string>;
  inputMode?: 'decimal';
}

interface Def {
  type: string;
  innerType?: Shape;
  in?: Shape;
  out?: Shape;
  entries?: Record<string, string>;
}
type Shape = { def: Def };

/** The schema a field's value is held to, without its optional, nullable, default and preprocessing wrappers. */
function unwrapped(field: Shape): Shape {
  let at = field;
  while (at.def.innerType || at.def.type === 'pipe') {
    if (at.def.innerType) at = at.def.innerType;
    else at = at.def.in!.def.type === 'transform' ? at.def.out! : at.def.in!;
  }
  return at;
}

const KINDS: Record<string, Kind> = { number: 'number', enum: 'choice', record: 'json', object: 'json', array: 'list' };

export interface FormField {
  name: string;
  kind: Kind;
  choices: string[];
  initial: string;
}

/** The fields of a request schema's shape, each with its kind and its first value (its default, else empty). */
export function formFields(schema: z.ZodObject): FormField[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const inner = unwrapped(field as unknown as Shape);
    const fallback = (field as z.ZodType).safeParse(undefined);
    const initial = fallback.success && fallback.data != null ? String(fallback.data) : '';
    return { name, kind: KINDS[inner.def.type] ?? 'text', choices: Object.values(inner.def.entries ?? {}), initial };
  });
}

/** The request body of the texts typed: numbers, JSON objects and lists read as such; fields left empty left out. */
export function bodyOf(fields: FormField[], values: Record<string, string>): Record<string, unknown> {
  const read = (kind: Kind, text: string): unknown => {
    if (kind === 'number') return numberOr(text);
    if (kind === 'json') return jsonObjectOr(text);
    if (kind === 'list') return text.trim() === '' ? undefined : text.split(',').map((item) => item.trim());
    return text;
  };
  return filled(Object.fromEntries(fields.map(({ name, kind }) => [name, read(kind, values[name] ?? '')])));
}
