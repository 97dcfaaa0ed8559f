import { Box, type Key, Text } from 'ink';
import { useReducer, useRef, useState } from 'react';
import type { z } from 'zod';
import { SandboxApiError } from '../../client/api-client.js';
import { issuesToDetails } from '../../core/records/schemas.js';
import type { Client } from '../client.js';
import { pad, paint } from '../render.js';
import { useKeys } from './keys.js';

interface Field {
  /** The request body's field it fills, by its contract name, which is also its label. */
  name: string;
  hint?: string;
  /** A choice: left and right pick one of these. */
  choices?: readonly string[];
  /** The JSON value of the text typed; what it throws is this field's error. Default: the text, left out when empty. */
  parse?: (text: string) => unknown;
  /** Kept for the next form that has it (a callback URL is typed once). */
  sticky?: boolean;
}

export type Values = Record<string, string>;
/** Errors by field name; '' holds those of no field of the form. */
export type Errors = Record<string, string>;

/** A small form: what it acts on, its fields, the API's schema that judges them and the request that sends them. */
export interface FormSpec {
  title: string;
  /** Lines that say what the form acts on. */
  about?: string[];
  fields: Field[];
  initial?: Values;
  /** The schema the API validates the same body with. */
  schema?: z.ZodType;
  /** What enter does: "create", "send". */
  verb: string;
  /** Sends the body; resolves with what the status line says. */
  submit(client: Client, body: Record<string, unknown>): Promise<string>;
}

const text = (value: string): string | undefined => value.trim() || undefined;

/** Errors from `path: problem` details: the API's VALIDATION_ERROR, and zod's through the API's own `issuesToDetails`. */
function errorsOf(details: string[], fields: Field[]): Errors {
  const errors: Errors = {};
  for (const detail of details) {
    const at = detail.indexOf(': ');
    const field = fields.find(({ name }) => name === detail.slice(0, at).split('.')[0]);
    if (field) errors[field.name] ??= detail.slice(at + 2);
    else errors[''] = errors[''] ? `${errors['']}; ${detail}` : detail;
  }
  return errors;
}

/** The request body of what was typed, or the errors the schema (or a field's own parsing) finds in it. */
function validate(spec: FormSpec, values: Values): { body: Record<string, unknown> } | { errors: Errors } {
  const body: Record<string, unknown> = {};
  const unparsed: Errors = {};
  for (const field of spec.fields) {
    try {
      const value = (field.parse ?? text)(values[field.name] ?? '');
      if (value !== undefined) body[field.name] = value;
    } catch (error) {
      unparsed[field.name] = (error as Error).message;
    }
  }
  const result = spec.schema?.safeParse(body);
  const errors = {
    ...(result && !result.success ? errorsOf(issuesToDetails(result.error), spec.fields) : {}),
    ...unparsed,
  };
  // The body as typed, not the schema's output: the API takes ARS, the schema's output is cents.
  return Object.keys(errors).length > 0 ? { errors } : { body };
}

function initialValues(spec: FormSpec, sticky: Values): Values {
  const values: Values = { ...spec.initial };
  for (const field of spec.fields) {
    if (field.sticky && sticky[field.name] !== undefined) values[field.name] = sticky[field.name]!;
    if (field.choices) values[field.name] ??= field.choices[0]!;
  }
  return values;
}

export interface FormProps {
  spec: FormSpec;
  /** Values typed before in fields marked sticky. */
  sticky?: Values;
  width: number;
  rows: number;
  /** Sends the body; an API error it throws is shown on the form, by field where the API names one. */
  onSubmit(body: Record<string, unknown>, values: Values): Promise<void>;
  onCancel(): void;
}

/** Tab and the arrows move between fields, left and right pick a choice, enter sends, esc goes back. */
export function Form({ spec, sticky = {}, width, rows, onSubmit, onCancel }: FormProps) {
  // Keys can come faster than renders (a paste, a fast terminal): each one reads and writes the latest values.
  const [initial] = useState(() => ({ values: initialValues(spec, sticky), active: 0 }));
  const state = useRef(initial);
  const [, rendered] = useReducer((n: number) => n + 1, 0);
  const update = (change: Partial<{ values: Values; active: number }>) => {
    state.current = { ...state.current, ...change };
    rendered();
  };
  const [errors, setErrors] = useState<Errors>({});
  const [busy, setBusy] = useState(false);
  const { values, active } = state.current;

  const submit = () => {
    const result = validate(spec, state.current.values);
    if ('errors' in result) return setErrors(result.errors);
    setErrors({});
    setBusy(true);
    onSubmit(result.body, state.current.values).catch((error: Error) => {
      setBusy(false);
      const details = error instanceof SandboxApiError ? error.details : [];
      const byField = errorsOf(details, spec.fields);
      // An error that names no field of the form (a conflict, a state) is said whole.
      setErrors(Object.keys(byField).some((name) => name !== '') ? byField : { '': error.message });
    });
  };

  const press = (input: string, key: Key) => {
    const count = spec.fields.length;
    const { values, active } = state.current;
    const field = spec.fields[active];
    const value = field ? (values[field.name] ?? '') : '';
    const set = (next: string) => field && update({ values: { ...values, [field.name]: next } });
    const move = (step: number) => count > 0 && update({ active: (active + step + count) % count });
    if (key.escape) onCancel();
    else if (key.return) submit();
    else if ((key.tab && key.shift) || key.upArrow) move(-1);
    else if (key.tab || key.downArrow) move(1);
    else if (field?.choices) {
      const step = key.leftArrow ? -1 : key.rightArrow || input === ' ' ? 1 : 0;
      const at = field.choices.indexOf(value);
      if (step !== 0) set(field.choices[(at + step + field.choices.length) % field.choices.length]!);
    } else if (key.backspace || key.delete) set(value.slice(0, -1));
    else if (key.ctrl && input === 'u') set('');
    else if (input && !key.ctrl && !key.meta) set(value + input);
  };

  useKeys(press, { isActive: !busy });

  const label = Math.max(...spec.fields.map(({ name }) => name.length), 0);
  const indent = ' '.repeat(label + 4);
  return (
    <Box flexDirection="column" width={width} height={rows} overflow="hidden" flexShrink={0}>
      <Text bold inverse wrap="truncate-end">
        {pad(` ${spec.title}`, width)}
      </Text>
      {spec.about?.map((line, i) => (
        <Text key={i} wrap="truncate-end">{`  ${line}`}</Text>
      ))}
      {spec.fields.map((f, i) => {
        const value = values[f.name] ?? '';
        const shown = f.choices
          ? f.choices.map((choice) => (choice === value ? `[${choice}]` : ` ${choice} `)).join(' ')
          : `${value}${i === active ? '_' : ''}${value === '' && f.hint ? `  ${paint('dim', f.hint)}` : ''}`;
        return (
          <Box key={f.name} flexDirection="column">
            <Text
              wrap="truncate-end"
              bold={i === active}
            >{`${i === active ? '>' : ' '} ${pad(f.name, label)}  ${shown}`}</Text>
            {errors[f.name] && <Text wrap="truncate-end">{`${indent}${paint('red', `! ${errors[f.name]}`)}`}</Text>}
          </Box>
        );
      })}
      {errors[''] && <Text wrap="wrap">{`  ${paint('red', `! ${errors['']}`)}`}</Text>}
      {busy && <Text>{'  sending…'}</Text>}
    </Box>
  );
}
