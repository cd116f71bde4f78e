/** At most this many tags a request (body and header together, once each). */
export const MAX_TAGS = 10;

/** A tag: 1 to 64 characters, a letter or digit first, then letters, digits and `_ . : / = + @ -`. */
export const TAG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:/=+@-]{0,63}$/;

/** Whether `value` is a record's tag list as the pipeline builds it (a journal line read back may hold anything). */
export function isTagList(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length <= MAX_TAGS &&
    value.every((t) => typeof t === 'string' && TAG_PATTERN.test(t)) &&
    new Set(value).size === value.length
  );
}
