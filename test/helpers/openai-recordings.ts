import { basename } from 'node:path';
import type { TokenLogprob } from '../../src/protocol/canonical/events.ts';
import { listFixtures, openAIPayloads } from './fixtures.ts';

/**
 * Every Chat Completions recording of an OpenAI-compatible server. Left out: the Responses API
 * (`responses-*`, `openai-responses/`) and Ollama's native `/api/chat` NDJSON.
 */
export const openAICompatibleRecordings: string[] = [
  'openai-chat',
  'deepseek',
  'xai',
  'mistral',
  'qwen',
  'huggingface',
  'groq',
  'ollama',
  'vllm',
  'openrouter',
  'gpustack',
  'zai',
].flatMap((folder) => listFixtures(folder, ['.sse', '.jsonl']).filter((name) => !basename(name).startsWith('responses-')));

export interface ExpectedToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ExpectedChoice {
  content: string | null;
  reasoning: string | null;
  refusal: string | null;
  toolCalls: ExpectedToolCall[];
  /** Citations (web search) as sent: `{type: 'url_citation', url_citation: {...}}`. */
  annotations: RawAnnotation[];
  finishReason: string | null;
  logprobs: TokenLogprob[] | null;
}

export type RawAnnotation = {
  type: string;
  url_citation: { url: string; title: string; start_index: number; end_index: number; content?: string };
};

/** Usage in OpenAI's client-facing shape; absent details are left out. */
export interface ExpectedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens?: number;
  cache_write_tokens?: number;
  reasoning_tokens?: number;
  audio_input_tokens?: number;
  audio_output_tokens?: number;
  accepted_prediction_tokens?: number;
  rejected_prediction_tokens?: number;
}

export interface ExpectedMessage {
  choices: ExpectedChoice[];
  usage: ExpectedUsage | null;
  /** The last usage object exactly as the upstream sent it. */
  rawUsage: RawUsage | null;
  /** The upstream's message when the stream ends in an error (`event: error` or an `error` key). */
  error: string | null;
}

// Just the recorded fields this reader looks at.
type Part = { type?: string; text?: string; thinking?: { text?: string }[] };
type RawToolCall = { index: number; id?: string; function?: { name?: string; arguments?: string } };
type RawChoice = {
  index?: number;
  finish_reason?: string | null;
  logprobs?: { content?: TokenLogprob[] | null } | null;
  delta?: {
    content?: string | Part[] | null;
    reasoning_content?: string | null;
    reasoning?: string | null;
    refusal?: string | null;
    tool_calls?: RawToolCall[] | null;
    annotations?: RawAnnotation[] | null;
  };
};
export type RawUsage = {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number; audio_tokens?: number | null } | null;
  completion_tokens_details?: {
    reasoning_tokens?: number;
    audio_tokens?: number | null;
    accepted_prediction_tokens?: number | null;
    rejected_prediction_tokens?: number | null;
  } | null;
  prompt_cache_hit_tokens?: number;
  cached_tokens?: number;
};
type RawChunk = {
  choices?: RawChoice[];
  usage?: RawUsage | null;
  x_groq?: { usage?: RawUsage };
  error?: { message: string };
};

/**
 * What a recording says the assistant produced, read straight from its payloads: the reference
 * the decoder and the whole gateway are checked against, so it shares no code with them.
 */
export function expectedFromRecording(name: string): ExpectedMessage {
  const chunks: RawChunk[] = [];
  let error: string | null = null;
  for (const { event, data } of openAIPayloads(name)) {
    if (data === '[DONE]') break;
    const chunk = JSON.parse(data) as RawChunk;
    chunks.push(chunk);
    if (event === 'error' || chunk.error) {
      error = chunk.error?.message ?? null;
      break;
    }
  }
  const { choices, usage } = foldChunks(chunks);
  // xAI counts reasoning outside completion_tokens (total_tokens = prompt + completion + reasoning).
  return { choices, usage: usage && expectedUsage(usage, name.startsWith('xai/')), rawUsage: usage, error };
}

/**
 * Folds Chat Completions chunk objects (a recording's payloads, or what a client received) into
 * the message they spell, and the last usage object as sent.
 */
export function foldChunks(chunks: readonly object[]): { choices: ExpectedChoice[]; usage: RawUsage | null } {
  const choices: {
    content: string;
    reasoning: string;
    refusal: string;
    calls: Map<number, ExpectedToolCall>;
    annotations: RawAnnotation[];
    finishReason: string | null;
    logprobs: TokenLogprob[];
  }[] = [];
  let usage: RawUsage | null = null;
  for (const chunk of chunks as RawChunk[]) {
    for (const c of chunk.choices ?? []) {
      const i = c.index ?? 0;
      const choice = (choices[i] ??= {
        content: '',
        reasoning: '',
        refusal: '',
        calls: new Map(),
        annotations: [],
        finishReason: null,
        logprobs: [],
      });
      const d = c.delta ?? {};
      choice.reasoning += d.reasoning_content ?? d.reasoning ?? '';
      if (typeof d.content === 'string') choice.content += d.content;
      for (const part of Array.isArray(d.content) ? d.content : []) {
        // Mistral's magistral streams typed parts: thinking parts hold the reasoning.
        if (part.type === 'thinking') choice.reasoning += (part.thinking ?? []).map((t) => t.text ?? '').join('');
        else choice.content += part.text ?? '';
      }
      choice.refusal += d.refusal ?? '';
      choice.annotations.push(...(d.annotations ?? []));
      choice.logprobs.push(...(c.logprobs?.content ?? []));
      for (const t of d.tool_calls ?? []) {
        let call = choice.calls.get(t.index);
        if (!call) choice.calls.set(t.index, (call = { id: '', name: '', arguments: '' }));
        call.id ||= t.id ?? '';
        call.name ||= t.function?.name ?? '';
        call.arguments += t.function?.arguments ?? '';
      }
      choice.finishReason ??= c.finish_reason ?? null;
    }
    usage = chunk.usage ?? chunk.x_groq?.usage ?? usage;
  }
  return {
    choices: choices.map((c) => ({
      content: c.content || null,
      reasoning: c.reasoning || null,
      refusal: c.refusal || null,
      toolCalls: [...c.calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call),
      annotations: c.annotations,
      finishReason: c.finishReason,
      logprobs: c.logprobs.length > 0 ? c.logprobs : null,
    })),
    usage,
  };
}

/** A usage object in the expectation's shape; `reasoningOutsideCompletion` adds reasoning to completion. */
export function expectedUsage(u: RawUsage, reasoningOutsideCompletion = false): ExpectedUsage {
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  const usage: ExpectedUsage = {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens + (reasoningOutsideCompletion ? (reasoning ?? 0) : 0),
    total_tokens: u.total_tokens,
  };
  // DeepSeek: prompt_cache_hit_tokens; Together (via Hugging Face): a top-level cached_tokens.
  const cached = u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens ?? u.cached_tokens;
  if (cached !== undefined) usage.cached_tokens = cached;
  const cacheWrite = u.prompt_tokens_details?.cache_write_tokens;
  if (cacheWrite !== undefined) usage.cache_write_tokens = cacheWrite;
  if (reasoning !== undefined) usage.reasoning_tokens = reasoning;
  // Audio and Predicted Outputs details (OpenAI, xAI); null in the reference means not reported.
  const details = {
    audio_input_tokens: u.prompt_tokens_details?.audio_tokens,
    audio_output_tokens: u.completion_tokens_details?.audio_tokens,
    accepted_prediction_tokens: u.completion_tokens_details?.accepted_prediction_tokens,
    rejected_prediction_tokens: u.completion_tokens_details?.rejected_prediction_tokens,
  };
  for (const [key, value] of Object.entries(details)) if (typeof value === 'number') usage[key as keyof typeof details] = value;
  return usage;
}

/** The same message with `<think>…</think>` at the start of the content moved to reasoning. */
export function withThinkTagsAsReasoning(expected: ExpectedMessage): ExpectedMessage {
  return {
    ...expected,
    choices: expected.choices.map((c) => {
      const m = /^<think>([\s\S]*?)<\/think>([\s\S]*)$/.exec(c.content ?? '');
      if (!m) throw new Error('the recording has no <think> block at the start of its content');
      return { ...c, reasoning: (c.reasoning ?? '') + m[1] || null, content: m[2] || null };
    }),
  };
}
