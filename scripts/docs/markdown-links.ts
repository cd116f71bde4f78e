/**
 * The links and headings of a Markdown page, read the way the docs site (VitePress) reads them, so
 * that a test can check every internal link and its #anchor without building the site.
 */

/** VitePress's heading slug (@mdit-vue/shared `slugify`), so that an anchor checked here is one the site has. */
export function slugify(text: string): string {
  return (
    text
      .normalize('NFKD')
      .replace(/[\u0300-\u036F]/g, '')
      // oxlint-disable-next-line no-control-regex -- VitePress's slug strips the C0 control characters too
      .replace(/[\u0000-\u001f]/g, '')
      .replace(/[\s~`!@#$%^&*()\-_+=[\]{}|\\;:"'“”‘’<>,.?/]+/g, '-')
      .replace(/-{2,}/g, '-')
      .replace(/^-+|-+$/g, '')
      .replace(/^(\d)/, '_$1')
      .toLowerCase()
  );
}

/** The lines of a page outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) out.push({ text, line: i + 1 });
  });
  return out;
}

/** A heading's text as the site renders it: inline code and links reduced to their text. */
function headingText(raw: string): string {
  return raw
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\*\*([^*]*)\*\*/g, '$1')
    .trim();
}

/** The anchors a page's headings get; a repeated slug gets -1, -2 ... as markdown-it-anchor numbers them. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const slug = slugify(headingText(heading[1]));
    let unique = slug;
    for (let n = 1; anchors.has(unique); n++) unique = `${slug}-${n}`;
    anchors.add(unique);
  }
  return anchors;
}

export interface MarkdownLink {
  target: string;
  line: number;
}

/** Inline links `[text](target)` outside code (fenced blocks and `inline code`). */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const prose = text.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push({ target: match[1], line });
  }
  return links;
}

/** A link to another site (or a mail address): not checked here. */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}
