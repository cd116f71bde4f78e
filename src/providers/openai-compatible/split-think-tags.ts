const OPEN = '<think>';
const CLOSE = '</think>';

export interface ThinkSegment {
  reasoning: boolean;
  text: string;
}

/**
 * Splits `<think>…</think>` out of streamed content (DeepSeek-R1 style models behind routers,
 * see fixtures/huggingface/router-together-deepseek-r1-think-tags.sse). A tag may be cut across
 * deltas, so a trailing partial tag is held back until the next delta decides it.
 */
export class ThinkTagSplitter {
  private inside = false;
  private pending = '';

  push(text: string): ThinkSegment[] {
    let rest = this.pending + text;
    this.pending = '';
    const out: ThinkSegment[] = [];
    while (rest.length > 0) {
      const tag = this.inside ? CLOSE : OPEN;
      const at = rest.indexOf(tag);
      if (at >= 0) {
        if (at > 0) out.push({ reasoning: this.inside, text: rest.slice(0, at) });
        this.inside = !this.inside;
        rest = rest.slice(at + tag.length);
        continue;
      }
      const keep = partialTagSuffix(rest, tag);
      const emit = rest.slice(0, rest.length - keep);
      if (emit) out.push({ reasoning: this.inside, text: emit });
      this.pending = rest.slice(rest.length - keep);
      break;
    }
    return out;
  }

  end(): ThinkSegment[] {
    const rest = this.pending;
    this.pending = '';
    return rest ? [{ reasoning: this.inside, text: rest }] : [];
  }
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagSuffix(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(tag.slice(0, n))) return n;
  }
  return 0;
}
