import type { IncomingMessage } from 'node:http';
import { errors } from '../../errors/catalog.ts';
import { readBodyBytes } from './read-json-body.ts';

/** A form field's value: text, or an uploaded file (its name, type and bytes). */
export type FormValue = string | File;

/**
 * A multipart body as its fields by name: one value, or, for a name sent more than once
 * (`timestamp_granularities[]`), every value in order. A plain object, so that the lifecycle reads
 * `model` from it as from a JSON body.
 */
export type MultipartBody = Record<string, FormValue | FormValue[]>;

/**
 * Reads a `multipart/form-data` body up to `limit` bytes (413 request_too_large past it, declared
 * or sent) and parses it with Node's own form parser (the fetch API's `Request.formData()`).
 * Another Content-Type is a 415; a body that does not parse as the form it declares, a 400.
 *
 * A multipart form, unlike JSON, is what a browser may send cross-site without a CORS preflight:
 * on a keyless gateway (loopback, anyone is the operator) any web page could spend its provider
 * credits. So the request must carry credentials in a header no such form can set
 * (`Authorization` or `x-api-key`, any value on a keyless gateway; the official clients always
 * send one), which makes a browser ask first, and the CORS policy refuse.
 */
export async function readMultipartBody(req: IncomingMessage, limit: number): Promise<MultipartBody> {
  const contentType = req.headers['content-type'];
  try {
    if (!isMultipart(contentType)) throw errors.unsupportedMediaType(contentType, 'multipart/form-data');
    if (req.headers.authorization === undefined && req.headers['x-api-key'] === undefined) {
      throw errors.invalidRequest(
        'A multipart request must carry an Authorization (or x-api-key) header, any value on a gateway without keys: a browser cannot send one cross-site without asking first.',
      );
    }
  } catch (err) {
    req.resume();
    throw err;
  }
  const bytes = await readBodyBytes(req, limit);
  let form: FormData;
  try {
    form = await new Request('http://sluice.invalid/', {
      method: 'POST',
      headers: { 'content-type': contentType as string },
      body: bytes,
    }).formData();
  } catch (err) {
    throw errors.invalidRequest(`The multipart body could not be parsed: ${(err as Error).message}`);
  }
  return fieldsOf(form);
}

function isMultipart(header: string | undefined): boolean {
  if (!header) return false;
  const semicolon = header.indexOf(';');
  return (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase() === 'multipart/form-data';
}

/** The form's fields by name, a repeated name's values in an array (fromEntries: a field named `__proto__` is a field). */
function fieldsOf(form: FormData): MultipartBody {
  const fields = new Map<string, FormValue[]>();
  for (const [name, value] of form) {
    const values = fields.get(name);
    if (values) values.push(value);
    else fields.set(name, [value]);
  }
  return Object.fromEntries([...fields].map(([name, values]) => [name, values.length === 1 ? values[0] : values]));
}

/** The fields back as a form (to relay upstream), each value in order. */
export function formOf(fields: MultipartBody): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    for (const one of Array.isArray(value) ? value : [value]) form.append(name, one);
  }
  return form;
}
