import { errors } from '../errors/catalog.ts';
import type { FormValue, MultipartBody } from './http/read-multipart-body.ts';

/**
 * The fields of a multipart request as the API's own server reads them: text is text, numbers
 * and booleans are text that parses as one, files are files. Each refusal is a 400 naming the
 * field, as a JSON body's schema would give.
 */
export class FormFields {
  private readonly fields: MultipartBody;

  constructor(fields: MultipartBody) {
    this.fields = fields;
  }

  /** The field's one text value; a file, or the field sent twice, is a 400. */
  text(name: string, required: true): string;
  text(name: string, required?: false): string | undefined;
  text(name: string, required = false): string | undefined {
    const value = this.fields[name];
    if (value === undefined) {
      if (required) throw errors.invalidRequest(`${name} is required.`, name);
      return undefined;
    }
    if (typeof value !== 'string') throw errors.invalidRequest(`${name} must be a text field, sent once.`, name);
    if (required && value === '') throw errors.invalidRequest(`${name} must not be empty.`, name);
    return value;
  }

  /** A whole number within [min, max], sent as text (`n=2`). */
  integer(name: string, min: number, max: number): number | undefined {
    const text = this.text(name);
    if (text === undefined) return undefined;
    const value = Number(text);
    if (text.trim() === '' || !Number.isInteger(value) || value < min || value > max) {
      throw errors.invalidRequest(
        `${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(text.slice(0, 40))}.`,
        name,
      );
    }
    return value;
  }

  /** `true` or `false` as text (the openai SDKs send `stream=true`). */
  boolean(name: string): boolean | undefined {
    const text = this.text(name);
    if (text === undefined) return undefined;
    if (text !== 'true' && text !== 'false') throw errors.invalidRequest(`${name} must be true or false.`, name);
    return text === 'true';
  }

  /** One of `allowed`. */
  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const text = this.text(name);
    if (text === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(text)) {
      throw errors.invalidRequest(
        `${name} must be one of ${allowed.join(', ')}, not ${JSON.stringify(text.slice(0, 40))}.`,
        name,
      );
    }
    return text as T;
  }

  /** The files of the first of `names` that was sent (`image` or `image[]`): at least one, each a file. */
  files(names: readonly string[], required: boolean): File[] {
    const name = names.find((one) => this.fields[one] !== undefined);
    if (name === undefined) {
      if (required) throw errors.invalidRequest(`${names[0]} is required: upload it as a file.`, names[0]);
      return [];
    }
    const values: FormValue[] = ([] as FormValue[]).concat(this.fields[name]);
    if (!values.every((value) => value instanceof File)) {
      throw errors.invalidRequest(`${name} must be a file upload, not a text field.`, name);
    }
    return values as File[];
  }

  /** The fields without `model`: what is relayed, under the target's model name. */
  withoutModel(): MultipartBody {
    const { model: _model, ...rest } = this.fields;
    return rest;
  }
}
