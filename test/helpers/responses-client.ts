import type { ExpectedMessage } from './openai-recordings.ts';

/** What a Responses `response` says, in one comparable shape (finalResponse, a body, a terminal event). */
export interface ResponseDigest {
  status: string | undefined;
  incomplete: string | null;
  reasoning: string | null;
  text: string | null;
  refusal: string | null;
  calls: { call_id: string; name: string; arguments: string }[];
  /** The output_text parts' annotations, in order. */
  annotations: unknown[];
  usage: unknown;
}

// Just the fields a digest reads.
type Part = { type: string; text?: string; refusal?: string; annotations?: unknown[] };
type Item = { type: string; summary?: { text: string }[]; content?: Part[]; call_id?: string; name?: string; arguments?: string };
interface ResponseLike {
  status?: string;
  incomplete_details?: { reason?: string } | null;
  output: readonly object[];
  usage?: unknown;
}

export function digest(response: ResponseLike): ResponseDigest {
  let reasoning = '';
  let text = '';
  let refusal = '';
  const calls: ResponseDigest['calls'] = [];
  const annotations: unknown[] = [];
  for (const item of response.output as Item[]) {
    if (item.type === 'reasoning') reasoning += (item.summary ?? []).map((s) => s.text).join('');
    if (item.type === 'function_call') calls.push({ call_id: item.call_id ?? '', name: item.name ?? '', arguments: item.arguments ?? '' });
    for (const part of item.type === 'message' ? (item.content ?? []) : []) {
      if (part.type === 'output_text') {
        text += part.text ?? '';
        annotations.push(...(part.annotations ?? []));
      }
      if (part.type === 'refusal') refusal += part.refusal ?? '';
    }
  }
  return {
    status: response.status,
    incomplete: response.incomplete_details?.reason ?? null,
    reasoning: reasoning || null,
    text: text || null,
    refusal: refusal || null,
    calls,
    annotations,
    usage: response.usage ?? null,
  };
}

/**
 * What a chat recording says the response must hold (choice 0: the Responses API has no `n`),
 * usage in the Responses shape. `usage` is null when the upstream sent none.
 */
export function expectedDigest(expected: ExpectedMessage): ResponseDigest {
  const c = expected.choices[0];
  const incomplete = c.finishReason === 'length' ? 'max_output_tokens' : c.finishReason === 'content_filter' ? 'content_filter' : null;
  const u = expected.usage;
  return {
    status: expected.error !== null ? 'failed' : incomplete ? 'incomplete' : 'completed',
    incomplete: expected.error === null ? incomplete : null,
    reasoning: c.reasoning,
    text: c.content,
    refusal: c.refusal,
    calls: c.toolCalls.map((t) => ({ call_id: t.id, name: t.name, arguments: t.arguments })),
    // The Responses shape: flat, and without the excerpt some chat providers add.
    annotations: c.annotations.map(({ type, url_citation: a }) => ({
      type,
      start_index: a.start_index,
      end_index: a.end_index,
      url: a.url,
      title: a.title,
    })),
    usage: u && {
      input_tokens: u.prompt_tokens,
      input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
      output_tokens: u.completion_tokens,
      output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
      total_tokens: u.prompt_tokens + u.completion_tokens,
    },
  };
}

/**
 * A response from the SDK without what the SDK itself adds (output_text, and the parsing
 * helpers' output_parsed, parsed, parsed_arguments): what came over the wire.
 */
export function asSent(response: object): Record<string, unknown> {
  const { output_text: _, output_parsed: __, ...rest } = response as Record<string, unknown>;
  const output = (rest.output as Record<string, unknown>[]).map((item) => {
    const { parsed_arguments: _p, ...fields } = item;
    if (!Array.isArray(fields.content)) return fields;
    return { ...fields, content: (fields.content as Record<string, unknown>[]).map(({ parsed: _c, ...part }) => part) };
  });
  return { ...rest, output };
}
