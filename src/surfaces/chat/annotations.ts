import type { UrlCitation } from '../../protocol/canonical/events.ts';

/** Chat Completions' annotation object (on a delta or a message); `content` only where the provider sent it. */
export function chatAnnotation(a: UrlCitation): Record<string, unknown> {
  const citation: Record<string, unknown> = { url: a.url, title: a.title, start_index: a.startIndex, end_index: a.endIndex };
  if (a.content !== undefined) citation.content = a.content;
  return { type: 'url_citation', url_citation: citation };
}
