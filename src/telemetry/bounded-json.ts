/** The fields of GenAI messages and parts that hold content (what can be long). */
const CONTENT_FIELDS = new Set(['content', 'arguments', 'response', 'uri']);

/**
 * A list as JSON text of at most `maxChars` characters that still parses: the items in order
 * while they fit, then the first that does not with its content cut to fit (if even its shape
 * does not, it is left out), and nothing after it. A string cut in the middle would not parse, and
 * a backend that shows these attributes parses them.
 */
export function boundedJson(items: readonly unknown[], maxChars: number): { json: string; clipped: boolean } {
  const whole = JSON.stringify(items);
  if (whole.length <= maxChars) return { json: whole, clipped: false };
  const kept: string[] = [];
  let used = 2;
  for (const item of items) {
    const comma = kept.length > 0 ? 1 : 0;
    const room = maxChars - used - comma;
    const json = JSON.stringify(item);
    if (json.length <= room) {
      kept.push(json);
      used += comma + json.length;
      continue;
    }
    const cut = cutToFit(item, room);
    if (cut !== undefined) kept.push(cut);
    break;
  }
  return { json: `[${kept.join(',')}]`, clipped: true };
}

/** The item with each content field cut to the longest length that lets it fit in `room`. */
function cutToFit(item: unknown, room: number): string | undefined {
  let best: string | undefined;
  let low = 0;
  let high = room;
  // Escapes make the JSON of a cut string longer than the string: the length is searched for.
  while (low <= high) {
    const length = Math.floor((low + high) / 2);
    const json = JSON.stringify(cutContent(item, length));
    if (json.length <= room) {
      best = json;
      low = length + 1;
    } else {
      high = length - 1;
    }
  }
  return best;
}

function cutContent(value: unknown, length: number): unknown {
  if (Array.isArray(value)) return value.map((v) => cutContent(v, length));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (!CONTENT_FIELDS.has(key) || v === null || v === undefined) out[key] = cutContent(v, length);
    else {
      const content = typeof v === 'string' ? v : JSON.stringify(v);
      out[key] = content.length > length ? content.slice(0, length) : v;
    }
  }
  return out;
}
