/**
 * Reads the text of a Chat Completions chunk that carries nothing but text for choice 0, from the
 * chunk's JSON text without JSON.parse; undefined for every other chunk, which the caller parses.
 *
 * Nearly every chunk of a stream is such a chunk, and the decoder reads one string of it: parsing
 * the whole chunk built its ~6 objects and ~10 strings for that, per token. `npm run bench`'s
 * gateway profile put the chunk decoder's JSON.parse at ~49 us of a 20-chunk stream (8% of its
 * CPU). Per chunk (the bench's OpenAI-shaped chunk, a loop of 2M, Node 24): JSON.parse and the
 * hand check 1,150 ns; a full scan here 750 ns; a chunk that repeats the last one's head and tail
 * (read, below) ~95 ns.
 *
 * What it takes, in compact JSON (no whitespace: what upstreams send; anything else is parsed):
 * - at the top, `choices` once, holding exactly one choice; `id` and `model` as strings;
 *   `system_fingerprint` and `service_tier` as a string or null; `usage`, `x_groq` and `error` as
 *   null; no `type` (a vendor event's); any other key (object, created, obfuscation, Mistral's padding `p`) as a string,
 *   integer, boolean or null, values the decoder never reads;
 * - in the choice, `index` 0 or absent, `delta` once, `logprobs`, `finish_reason` and `message`
 *   null or absent, any other key a scalar;
 * - in the delta, `content` once as a non-empty string, `reasoning_content`, `reasoning`,
 *   `refusal`, `tool_calls` and `annotations` null or absent, any other key (role, channel) a scalar.
 * Such a chunk, after the stream's first, decodes to exactly one text event for choice 0, as it
 * would through JSON.parse and ChunkDecoder: text-only-chunk.test.ts checks that on every recording
 * and on seeded random edits of them, including invalid JSON, which must never be taken.
 *
 * Hand-written: no JSON library offers "parse these three fields if the rest is inert, else say
 * no", and a regular expression cannot express "these keys in any order, once".
 */
export class TextChunkReader {
  /**
   * The last chunk taken, split around its content string: everything up to the string's opening
   * quote, and everything after its closing quote. A stream repeats both from chunk to chunk (same
   * id, model and fingerprint, the same choice shape), so a chunk made of the same two around
   * another valid string is the same text-only chunk with another text: only that string is
   * scanned (~95 ns a chunk, above). Compared with `===` on slices: V8's startsWith went character
   * by character, 3x slower.
   */
  private head = '';
  private tail = '';

  /** The chunk's text, or undefined when it is anything but a text-only chunk for choice 0. */
  read(json: string): string | undefined {
    const head = this.head;
    if (head !== '' && json.slice(0, head.length) === head) {
      const quote = head.length - 1;
      const end = stringEnd(json, quote);
      if (end > quote + 2 && json.slice(end) === this.tail) return stringText(json, quote, end);
    }
    const text = scan(json);
    if (text !== undefined) {
      this.head = copied(json.slice(0, found.quote + 1));
      this.tail = copied(json.slice(found.end));
    }
    return text;
  }
}

/**
 * A string of its own: a slice of `json` would keep its parent alive for the stream's life, and
 * the parent may be the whole network read the frame came in. UTF-16 both ways keeps every code
 * unit, lone surrogates included. Once a stream, not a chunk.
 */
function copied(slice: string): string {
  return Buffer.from(slice, 'utf16le').toString('utf16le');
}

/** The text of the JSON string between `quote` and `end` (past its closing quote). */
function stringText(json: string, quote: number, end: number): string {
  // Escapes (\n, \", \u00e9) are decoded by JSON.parse of the string alone.
  return escaped ? (JSON.parse(json.slice(quote, end)) as string) : json.slice(quote + 1, end - 1);
}

/** A whole chunk; its text, with where its content string starts and ends left in `found`. */
function scan(json: string): string | undefined {
  let text: string | undefined;
  const end = objectEnd(json, 0, (key, v) => {
    switch (key) {
      case 'choices': {
        if (text !== undefined) return -1;
        const end = choices(json, v);
        if (end >= 0) text = found.text;
        return end;
      }
      case 'id':
      case 'model':
        return json.charCodeAt(v) === QUOTE ? stringEnd(json, v) : -1;
      case 'system_fingerprint':
      case 'service_tier':
        return json.charCodeAt(v) === QUOTE ? stringEnd(json, v) : nullEnd(json, v);
      case 'usage':
      case 'x_groq':
      case 'error':
        return nullEnd(json, v);
      case 'type':
        // `{"type":"x_..."}` is a vendor event, not a chunk (decode-stream.ts).
        return -1;
      default:
        return scalarEnd(json, v);
    }
  });
  return end === json.length ? text : undefined;
}

/**
 * The object at `start` (its `{`), each member handed to `member` with its key and where its
 * value starts, which returns the index past the value or -1; the index past the `}`, or -1.
 */
function objectEnd(json: string, start: number, member: (key: string, value: number) => number): number {
  if (json.charCodeAt(start) !== LBRACE) return -1;
  let i = start + 1;
  for (;;) {
    if (json.charCodeAt(i) !== QUOTE) return -1;
    const keyEnd = plainStringEnd(json, i);
    if (keyEnd < 0 || json.charCodeAt(keyEnd) !== COLON) return -1;
    const end = member(json.slice(i + 1, keyEnd - 1), keyEnd + 1);
    if (end < 0) return -1;
    const next = json.charCodeAt(end);
    if (next === RBRACE) return end + 1;
    if (next !== COMMA) return -1;
    i = end + 1;
  }
}

// Local, not imported from a shared module: imported bindings cost the repeat path 60 -> 67 ns a
// chunk (text-delta.ts measured the same).
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const ZERO = 0x30;
const NINE = 0x39;
const MINUS = 0x2d;

/** What the scan found: read right after the call, the scanner being synchronous. */
const found = { text: '', quote: 0, end: 0 };

/** `[{...}]`: one choice; the index past `]`, or -1. */
function choices(json: string, i: number): number {
  if (json.charCodeAt(i) !== LBRACKET || json.charCodeAt(i + 1) !== LBRACE) return -1;
  const end = choice(json, i + 1);
  return end >= 0 && json.charCodeAt(end) === RBRACKET ? end + 1 : -1;
}

/** The choice object at `start`; the index past its `}`, or -1. Its text is left in `found`. */
function choice(json: string, start: number): number {
  let delta = false;
  const end = objectEnd(json, start, (key, v) => {
    switch (key) {
      case 'delta':
        if (delta) return -1;
        delta = true;
        return deltaEnd(json, v);
      case 'index':
        // 0 alone: `0` followed by what ends a value (JSON allows no leading zeros).
        return json.charCodeAt(v) === ZERO && !isDigitOrNumberPart(json.charCodeAt(v + 1)) ? v + 1 : -1;
      case 'logprobs':
      case 'finish_reason':
      case 'message':
        return nullEnd(json, v);
      default:
        return scalarEnd(json, v);
    }
  });
  return delta ? end : -1;
}

/** The delta object at `start`; the index past its `}`, or -1. Its content is left in `found`. */
function deltaEnd(json: string, start: number): number {
  let content = false;
  const end = objectEnd(json, start, (key, v) => {
    switch (key) {
      case 'content': {
        if (content || json.charCodeAt(v) !== QUOTE) return -1;
        content = true;
        const end = stringEnd(json, v);
        if (end < 0 || end === v + 2) return -1;
        found.text = stringText(json, v, end);
        found.quote = v;
        found.end = end;
        return end;
      }
      case 'reasoning_content':
      case 'reasoning':
      case 'refusal':
      case 'tool_calls':
      case 'annotations':
        return nullEnd(json, v);
      default:
        return scalarEnd(json, v);
    }
  });
  return content ? end : -1;
}

/** Whether the last string scanned by stringEnd held an escape. */
let escaped = false;

/** The JSON string at `i` (its opening quote); the index past its closing quote, or -1 if invalid. */
function stringEnd(json: string, i: number): number {
  escaped = false;
  for (let j = i + 1; j < json.length; j++) {
    const c = json.charCodeAt(j);
    if (c === QUOTE) return j + 1;
    // Control characters must be escaped in JSON.
    if (c < 0x20) return -1;
    if (c !== BACKSLASH) continue;
    escaped = true;
    const e = json.charCodeAt(++j);
    if (e === 0x75 /* u */) {
      for (let k = 1; k <= 4; k++) if (!isHex(json.charCodeAt(j + k))) return -1;
      j += 4;
    } else if (!isEscapable(e)) {
      return -1;
    }
  }
  return -1;
}

/** A key: a JSON string without escapes (a key with one is never one of those read here). */
function plainStringEnd(json: string, i: number): number {
  const end = stringEnd(json, i);
  return escaped ? -1 : end;
}

function nullEnd(json: string, i: number): number {
  return json.startsWith('null', i) ? i + 4 : -1;
}

/** A string, an integer, true, false or null: a value a key the decoder never reads may hold. */
function scalarEnd(json: string, i: number): number {
  const c = json.charCodeAt(i);
  if (c === QUOTE) return stringEnd(json, i);
  if (c === 0x6e /* n */) return nullEnd(json, i);
  if (c === 0x74 /* t */) return json.startsWith('true', i) ? i + 4 : -1;
  if (c === 0x66 /* f */) return json.startsWith('false', i) ? i + 5 : -1;
  return integerEnd(json, i);
}

/** `-?(0|[1-9][0-9]*)` not followed by a fraction or an exponent (those are left to JSON.parse). */
function integerEnd(json: string, start: number): number {
  let i = json.charCodeAt(start) === MINUS ? start + 1 : start;
  const first = json.charCodeAt(i);
  if (first === ZERO) i++;
  else if (first > ZERO && first <= NINE) while (isDigit(json.charCodeAt(++i)));
  else return -1;
  return isDigitOrNumberPart(json.charCodeAt(i)) ? -1 : i;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/** A digit, `.`, `e` or `E`: what may not follow a whole integer here. */
function isDigitOrNumberPart(c: number): boolean {
  return isDigit(c) || c === 0x2e || c === 0x65 || c === 0x45;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`. */
function isEscapable(c: number): boolean {
  return c === QUOTE || c === BACKSLASH || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74;
}
