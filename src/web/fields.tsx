import {
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
  useId,
} from 'react';

/** The inspector's form controls: each labelled, with its error or hint below it. */

type FieldProps = { label: string; error?: string | undefined; hint?: string };

/** A labelled control with its error (or hint) right below it, tied to it for screen readers. */
function FieldFrame({
  label,
  error,
  hint,
  children,
}: FieldProps & {
  children: (props: { id: string; 'aria-invalid'?: true; 'aria-describedby'?: string }) => ReactNode;
}) {
  const id = useId();
  const noteId = `${id}-note`;
  return (
    <div className={`field${error ? ' invalid' : ''}`}>
      <label htmlFor={id}>{label}</label>
      {children({
        id,
        ...(error ? { 'aria-invalid': true } : {}),
        ...(error || hint ? { 'aria-describedby': noteId } : {}),
      })}
      {error ? (
        <span className="field-error" id={noteId}>
          {error}
        </span>
      ) : hint ? (
        <span className="hint" id={noteId}>
          {hint}
        </span>
      ) : null}
    </div>
  );
}

export const Field = ({ label, error, hint, ...input }: FieldProps & InputHTMLAttributes<HTMLInputElement>) => (
  <FieldFrame label={label} error={error} hint={hint ?? ''}>
    {(props) => <input {...input} {...props} />}
  </FieldFrame>
);

export const SelectField = ({
  label,
  error,
  hint,
  options,
  ...select
}: FieldProps & { options: [string, string][] } & SelectHTMLAttributes<HTMLSelectElement>) => (
  <FieldFrame label={label} error={error} hint={hint ?? ''}>
    {(props) => (
      <select {...select} {...props}>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    )}
  </FieldFrame>
);

export const TextAreaField = ({
  label,
  error,
  hint,
  ...area
}: FieldProps & TextareaHTMLAttributes<HTMLTextAreaElement>) => (
  <FieldFrame label={label} error={error} hint={hint ?? ''}>
    {(props) => <textarea rows={3} {...area} {...props} />}
  </FieldFrame>
);
