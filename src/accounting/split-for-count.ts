/**
 * Where a text may be cut for counting, so that the pieces' counts add up to the whole's.
 *
 * A BPE tokenizer (gpt-tokenizer, like tiktoken) first splits a text with its pre-tokenizer
 * regex, then merges bytes within each match; the merging costs O(n²) in the length of a match.
 * Prose has short matches, but a long run without a boundary (256 KiB of letters, a long whitespace
 * run) is one match and costs minutes. Cutting such runs bounds the cost at the price of a small,
 * bounded error (see MAX_RUN); cutting anywhere else costs nothing at all.
 *
 * A cut at `p` is safe, for both o200k and cl100k, when every match of the pre-tokenizer regex
 * ends at `p` and none looks past it:
 * - `p` is a space or tab after a non-whitespace character: no alternative consumes a
 *   non-whitespace character followed by a space or tab (the punctuation one takes trailing
 *   `\r\n/` only, the letter ones take a leading space only);
 * - `p` follows a letter or digit and is neither a letter, digit, mark nor apostrophe: letter runs
 *   end there (o200k's contraction suffix starts with an apostrophe, its runs take marks), and so
 *   do digit groups.
 * Whitespace-only lookaheads (`\s+(?!\S)`, `\s+$`) never reach past such a `p` because the
 * character before it is not whitespace. split-for-count.test.ts checks this against whole counts.
 */

/**
 * The longest run between safe cuts that is counted in one piece; a longer one is cut every
 * MAX_RUN characters (a hard cut). Cost, o200k on random lowercase letters (one match per run) on
 * this 2-core machine under load: runs of 63 ~1-3 us/char, of 255 ~5-7 us/char; one unbroken run
 * of 16 KiB ~8 us/char, of 256 KiB ~200 us/char (53 s). Each hard cut turns one regex match into
 * two (and can shift the next match of the same run): measured +0.1-0.2 tokens per cut on average
 * for letters, base64 or punctuation, +0.45 for whitespace, +1.1 for one letter repeated, 0 for
 * digits, CJK and emoji; split-for-count.test.ts bounds it by MAX_HARD_CUT_ERROR per cut. A
 * multiple of 3, so that a digit run (three digits a token) cut at a run start is counted exactly.
 */
export const MAX_RUN = 63;

/** The largest change of a count that one hard cut may cause (asserted by the tests). */
export const MAX_HARD_CUT_ERROR = 3;

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/uy;
/** What may continue a letter or digit match: letters, digits, marks, o200k's contraction suffix. */
const CONTINUES_A_WORD = /[\p{L}\p{N}\p{M}']/uy;
const WHITESPACE = /\s/uy;

function test(re: RegExp, text: string, at: number): boolean {
  re.lastIndex = at;
  return re.test(text);
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;
const isAsciiLetterOrDigit = (c: number) => (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
const isAsciiWhitespace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d);

/** Whether counting text[0, p) and text[p, …) apart gives exactly the count of the whole. */
export function isSafeCut(text: string, p: number): boolean {
  if (p <= 0 || p >= text.length) return false;
  const at = text.charCodeAt(p);
  const before = text.charCodeAt(p - 1);
  // Never inside a surrogate pair.
  if (isLowSurrogate(at) && isHighSurrogate(before)) return false;
  if (at === 0x20 || at === 0x09) {
    return before < 0x80 ? !isAsciiWhitespace(before) : !test(WHITESPACE, text, p - 1);
  }
  // The character before p, whole (an astral letter is two code units).
  const beforeStart = isLowSurrogate(before) && p >= 2 && isHighSurrogate(text.charCodeAt(p - 2)) ? p - 2 : p - 1;
  const letterBefore = before < 0x80 ? isAsciiLetterOrDigit(before) : test(LETTER_OR_DIGIT, text, beforeStart);
  if (!letterBefore) return false;
  if (at < 0x80) return !isAsciiLetterOrDigit(at) && at !== 0x27;
  return !test(CONTINUES_A_WORD, text, p);
}

/** A cut at `p` that does not split a surrogate pair: `p`, or one code unit earlier. */
function codePointCut(text: string, p: number): number {
  return isHighSurrogate(text.charCodeAt(p - 1)) && isLowSurrogate(text.charCodeAt(p)) ? p - 1 : p;
}

/**
 * Where to end a piece of at most `max` characters starting at `from`: the last safe cut in
 * (from, from + max], else a hard cut at from + max. Returns text.length when the rest fits.
 */
export function pieceEnd(text: string, from: number, max: number): number {
  const limit = from + max;
  if (limit >= text.length) return text.length;
  for (let p = limit; p > from; p--) if (isSafeCut(text, p)) return p;
  const hard = codePointCut(text, limit);
  return hard > from ? hard : limit;
}

/**
 * The text cut into segments in which no run between safe cuts is longer than `maxRun`: one
 * segment (the text itself) unless a run is longer. Counting the segments apart is exact but for
 * the hard cuts, one per `maxRun` characters of such a run.
 */
export function splitLongRuns(text: string, maxRun = MAX_RUN): string[] {
  if (text.length <= maxRun) return [text];
  const segments: string[] = [];
  let start = 0;
  let runStart = 0;
  for (let p = 1; p < text.length; p++) {
    if (isSafeCut(text, p)) runStart = p;
    else if (p - runStart >= maxRun) {
      const cut = codePointCut(text, p);
      if (cut <= runStart) continue;
      segments.push(text.slice(start, cut));
      start = runStart = cut;
    }
  }
  segments.push(text.slice(start));
  return segments;
}
