import { Field, SelectField, TextAreaField } from './fields.js';
import type { Control, FormField } from './form-fields.js';
import { labelOf } from './labels.js';

type Bind = (name: string) => {
  name: string;
  value: string | undefined;
  error: string | undefined;
  onChange: (event: { target: { value: string } }) => void;
};

/** The controls of a form's fields, in the schema's order. */
export function SchemaFields(props: { fields: FormField[]; bind: Bind; controls: Record<string, Control> }) {
  const { fields, bind, controls } = props;
  return fields.map(({ name, kind, choices }) => {
    const control = controls[name] ?? {};
    const label = control.label ?? labelOf(name);
    if (kind === 'choice') {
      const options = choices.map((choice): [string, string] => [choice, control.choices?.[choice] ?? choice]);
      return <SelectField key={name} label={label} {...bind(name)} options={options} />;
    }
    if (kind === 'json') return <TextAreaField key={name} label={`${label} (JSON object)`} {...bind(name)} />;
    const hint = control.hint ?? (kind === 'list' ? 'comma-separated' : undefined);
    const numeric: 'numeric' | 'decimal' = control.inputMode ?? 'numeric';
    const input = kind === 'number' ? { inputMode: numeric } : name.endsWith('Url') ? { type: 'url' } : {};
    return <Field key={name} label={label} {...(hint ? { hint } : {})} {...input} {...bind(name)} />;
  });
}
