import { MAX_TAGS, TAG_PATTERN } from '../accounting/tag-rules.ts';
import { errors } from '../errors/catalog.ts';

/** The body without sluice's own `metadata.tags` (never sent upstream), and the request's tags. */
export interface TakenTags {
  body: unknown;
  /** In the order given, each once; null: none. */
  tags: string[] | null;
}

/**
 * The request's tags: `metadata.tags` of the body (an array of strings) and the `x-sluice-tags`
 * header (comma-separated), each once. `metadata.tags` is taken out of the body before the surface
 * parses it: the upstream's own `metadata` (OpenAI's is string to string) never sees an array, and
 * a `metadata` left empty is dropped. A bad tag is a 400 naming where it came from.
 */
export function takeTags(body: unknown, header: string | string[] | undefined): TakenTags {
  const tags: string[] = [];
  let rest = body;
  const metadata = isObject(body) ? body.metadata : undefined;
  if (isObject(metadata) && 'tags' in metadata) {
    const given = metadata.tags;
    if (!Array.isArray(given) || !given.every((t) => typeof t === 'string')) {
      throw errors.invalidRequest('metadata.tags must be an array of strings.', 'metadata.tags');
    }
    for (const [i, tag] of given.entries()) add(tags, tag, `metadata.tags[${i}]`);
    const { tags: _taken, ...others } = metadata;
    const { metadata: _metadata, ...fields } = body as Record<string, unknown>;
    rest = Object.keys(others).length > 0 ? { ...fields, metadata: others } : fields;
  }
  const text = Array.isArray(header) ? header.join(',') : header;
  for (const tag of text?.split(',') ?? []) {
    const trimmed = tag.trim();
    if (trimmed !== '') add(tags, trimmed, 'x-sluice-tags');
  }
  return { body: rest, tags: tags.length > 0 ? tags : null };
}

function add(tags: string[], tag: string, param: string): void {
  if (!TAG_PATTERN.test(tag)) {
    throw errors.invalidRequest(
      `${param} ${JSON.stringify(tag.slice(0, 80))} is not a tag: 1 to 64 characters, a letter or digit first, then letters, digits and _ . : / = + @ -.`,
      param,
    );
  }
  if (tags.includes(tag)) return;
  if (tags.length >= MAX_TAGS) throw errors.invalidRequest(`A request carries at most ${MAX_TAGS} tags.`, param);
  tags.push(tag);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
