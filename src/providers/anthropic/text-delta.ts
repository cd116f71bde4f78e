import type { AnthropicStreamPayload } from './payload-schema.ts';

// The character codes are this file's own, as in text-only-chunk.ts: shared from one module, the
// imported bindings cost this scanner 127 -> 148 ns an event (best of 9 x 200k, Node 24), where V8
// folds a local const.
const HEAD = '{"type":"content_block_delta","index":';
const DELTA = ',"delta":{"type":"text_delta","text":"';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CLOSE = 0x7d;
const SPACE = 0x20;
const ZERO = 0x30;
const NINE = 0x39;
/** Digits of an index that is surely a safe integer (15 < log10(2^53)). */
const MAX_DIGITS = 15;

/**
 * The payload of a text delta event, read from its JSON text without JSON.parse; undefined for
 * every other event, which the caller parses (decode-stream.ts). Nearly every event of a stream
 * is one, in exactly this form, compact, in this key order, with spaces between the last two
 * braces as the only whitespace (the recorded Anthropic streams pad a varying run of spaces
 * there; the bench's fake upstream sends none):
 *   {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"..."}   }
 * Anything else (another key, whitespace, another order, a number JSON refuses) is left to
 * JSON.parse, so the result is always what JSON.parse and commonEvent give: text-delta.test.ts
 * checks that on every recording and on seeded random edits of them. Per event (a loop of 200k
 * over ten recorded-shape events, Node 24): JSON.parse and commonEvent 378-381 ns, this 123-127
 * ns; the bench's 20-token Anthropic stream through the whole stream decoder, 17.8-18.5 ->
 * 11.3-11.6 µs (best of 9 rounds of 20k streams, two runs, the two alternating).
 */
export function textDelta(data: string): AnthropicStreamPayload | undefined {
  if (!data.startsWith(HEAD)) return undefined;
  const digits = HEAD.length;
  const i = indexEnd(data, digits);
  if (i === -1 || !data.startsWith(DELTA, i)) return undefined;
  const start = i + DELTA.length;
  let escaped = false;
  let end = start;
  for (; end < data.length; end++) {
    const c = data.charCodeAt(end);
    if (c === QUOTE) break;
    // A raw control character is not JSON; an escape is decoded (and checked) by JSON.parse below.
    if (c < 0x20) return undefined;
    if (c === BACKSLASH) {
      escaped = true;
      end++;
    }
  }
  if (!closes(data, end)) return undefined;
  const text = escaped ? stringOf(data.slice(start - 1, end + 1)) : data.slice(start, end);
  if (text === undefined) return undefined;
  return { type: 'content_block_delta', index: Number(data.slice(digits, i)), delta: { type: 'text_delta', text } };
}

/** Where the index's digits from `from` end; -1 for none, or a number JSON or a safe integer refuses. */
function indexEnd(data: string, from: number): number {
  let i = from;
  while (i < data.length && data.charCodeAt(i) >= ZERO && data.charCodeAt(i) <= NINE) i++;
  const count = i - from;
  // JSON has no leading zeros (`01` fails JSON.parse, which the caller must see).
  return count === 0 || count > MAX_DIGITS || (count > 1 && data.charCodeAt(from) === ZERO) ? -1 : i;
}

/** After the text's closing quote at `quote`: the two objects' ends, only spaces between them, and nothing after. */
function closes(data: string, quote: number): boolean {
  const last = data.length - 1;
  if (quote + 2 > last || data.charCodeAt(quote + 1) !== CLOSE || data.charCodeAt(last) !== CLOSE) return false;
  for (let pad = quote + 2; pad < last; pad++) if (data.charCodeAt(pad) !== SPACE) return false;
  return true;
}

/** A JSON string literal's value; undefined for an invalid escape (JSON.parse of the whole then fails too). */
function stringOf(literal: string): string | undefined {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return undefined;
  }
}
