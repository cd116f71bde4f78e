import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { ApiError } from './api.ts';

/** One field of an edit form: the request field it sets, and how its text becomes that field's value. */
export interface FieldSpec {
  /** The request field, dotted when nested (`budgets.daily_usd`): an error whose `param` names it shows beside it. */
  param: string;
  label: string;
  type?: 'text' | 'number' | 'datetime-local' | 'select';
  /** A select's choices. */
  options?: readonly { value: string; text: string }[];
  required?: boolean;
  /** The text as the API takes it; an empty text is null (the PATCH clears the field). */
  parse: (text: string) => unknown;
}

export type Draft = Record<string, string>;

/** The fields whose text changed, nested by their dotted names: a PATCH keeps every field it is not given. */
function changedBody(fields: readonly FieldSpec[], initial: Draft, draft: Draft): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const f of fields) {
    if (draft[f.param] === initial[f.param]) continue;
    const path = f.param.split('.');
    let at = body;
    for (const part of path.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
    at[path[path.length - 1]] = f.parse(draft[f.param]);
  }
  return body;
}

/** The field an error names: the field itself or a part of it (`models[2]`, `cache.ttl_s`). */
function fieldNamed(fields: readonly FieldSpec[], param: string | null): string | undefined {
  if (!param) return undefined;
  return fields.find((f) => param === f.param || param.startsWith(`${f.param}[`) || param.startsWith(`${f.param}.`))?.param;
}

interface Props {
  /** The form's accessible name and heading. */
  title: string;
  fields: readonly FieldSpec[];
  initial: Draft;
  submitText?: string;
  /** Sends the changed fields; a refusal naming a field shows beside it, any other above the buttons. */
  save: (body: Record<string, unknown>) => Promise<unknown>;
  onDone: () => void;
  onCancel: () => void;
}

/** A small form that edits (or creates) one thing of the admin API. It takes the focus when it opens. */
export function EditForm({ title, fields, initial, submitText = 'Save', save, onDone, onCancel }: Props) {
  const [draft, setDraft] = useState(initial);
  const [error, setError] = useState<Error>();
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const id = useId();
  useEffect(() => {
    form.current?.scrollIntoView({ block: 'nearest' });
    form.current?.querySelector<HTMLElement>('input, select')?.focus();
  }, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await save(changedBody(fields, initial, draft));
      onDone();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  const named = fieldNamed(fields, error instanceof ApiError ? error.param : null);

  return (
    <form ref={form} className="edit" aria-label={title} onSubmit={(e) => void submit(e)}>
      <h3>{title}</h3>
      {fields.map((f) => {
        const errorId = `${id}-${f.param}-error`;
        const invalid = named === f.param;
        const common = {
          value: draft[f.param],
          required: f.required,
          'aria-invalid': invalid || undefined,
          'aria-describedby': invalid ? errorId : undefined,
        };
        return (
          <div key={f.param} className="field">
            <label>
              {f.label}
              {f.type === 'select' ? (
                <select {...common} onChange={(e) => setDraft({ ...draft, [f.param]: e.target.value })}>
                  {f.options?.map((o) => (
                    <option key={o.value} value={o.value}>
                      {o.text}
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  {...common}
                  type={f.type ?? 'text'}
                  {...(f.type === 'number' && { min: 0, step: 'any' })}
                  onChange={(e) => setDraft({ ...draft, [f.param]: e.target.value })}
                />
              )}
            </label>
            {invalid && (
              <p id={errorId} role="alert" className="error field-error">
                {error?.message}
              </p>
            )}
          </div>
        );
      })}
      {error && !named && (
        <p role="alert" className="error">
          {error.message}
        </p>
      )}
      <div className="row">
        <button type="submit" disabled={busy}>
          {submitText}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
