/**
 * The model a body asks for, read before the body is parsed: a request refused for another field
 * of its body (or for its depth) still records the model it asked for, not an empty one. The
 * ledger caps the text (store/sanitize-record.ts); anything but a string is no model.
 */
export function requestedModelOf(body: unknown): string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return '';
  const model = (body as { model?: unknown }).model;
  return typeof model === 'string' ? model : '';
}
