/**
 * The canonical request: what every provider and the accountant take, whichever surface the
 * client used (/v1/chat/completions, /v1/responses, ...). Each surface validates its own body and
 * maps it here; no provider reads a client wire format.
 *
 * Decisions:
 * - Vocabulary: OpenAI Chat Completions names in snake_case (`messages`, `tool_calls`,
 *   `max_completion_tokens`, `reasoning_effort`, ...). It is the lingua franca of the field, every
 *   provider converter already speaks it, and the OpenAI-compatible adapter sends it almost as is.
 * - Ours and closed: hand-written, no index signatures, except where the content is opaque by
 *   nature: hosted tools and assistant parts of a type sluice does not model (both only travel to
 *   OpenAI-compatible upstreams), JSON Schemas, metadata and the `extra` bags.
 * - `extra`: fields a surface accepted without modelling them, at the level they came (request,
 *   message, text part, file), as sent. An OpenAI-compatible upstream receives them unchanged
 *   (OpenRouter's `provider`, vLLM's `top_k`, DeepSeek's assistant `prefix`); a native provider
 *   reads the few it documents (Anthropic's `top_k`) or refuses them (Gemini's `audio`). With
 *   them the chat surface is lossless: the OpenAI-compatible adapter rebuilds exactly the body the
 *   client sent, without a second copy of it that a later step could leave stale.
 * - Normalized at the surface: a `developer` message is a system message with `developer: true`
 *   (only an OpenAI-compatible upstream is told the difference). The legacy `function` role stays a
 *   role of its own, because providers do not treat it alike: Gemini answers it as a tool result
 *   by name, Anthropic and Bedrock refuse it, OpenAI-compatible upstreams receive it.
 * - Not here: `stream` (the adapter's `stream` or `complete` method says it) and
 *   `stream_options.include_usage` (the surface decides what the client sees; adapters always ask
 *   for usage). The chat surface keeps the client's `stream_options` in `extra` because its other
 *   members (OpenAI's `include_obfuscation`) are for the upstream.
 * - Both `max_completion_tokens` and `max_tokens`, as in the OpenAI API: the output limit
 *   (reasoning included) is `max_completion_tokens ?? max_tokens`. An OpenAI-compatible upstream
 *   gets the name the client used (some accept only one); other surfaces set `max_completion_tokens`.
 * - `null` means absent, as in the OpenAI API; it is kept where a surface allows it so the body
 *   an OpenAI-compatible upstream receives is the one sent.
 * - Provider extras that providers read are named fields: `cache_control` (Anthropic's prompt
 *   caching, also honoured by OpenRouter) on messages and text parts, as the client sent it; the
 *   provider that honours it validates it (Anthropic: a 400 naming it).
 */

/** Fields accepted but not modelled, as sent (see the top of this file). */
export type Extra = Record<string, unknown>;

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

export interface CanonicalRequest {
  /** The model the client asked for (an alias or `provider/model`); adapters get the upstream's id apart. */
  model: string;
  messages: CanonicalMessage[];
  tools?: CanonicalTool[];
  tool_choice?: CanonicalToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: CanonicalResponseFormat;
  reasoning_effort?: ReasoningEffort | null;
  max_completion_tokens?: number | null;
  max_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  n?: number | null;
  stop?: string | string[] | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  logit_bias?: Record<string, number> | null;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  seed?: number | null;
  /** The end user, for the provider's abuse monitoring and logs. */
  user?: string;
  metadata?: Record<string, string> | null;
  service_tier?: string | null;
  extra?: Extra;
}

export type CanonicalMessage =
  | CanonicalSystemMessage
  | CanonicalUserMessage
  | CanonicalAssistantMessage
  | CanonicalToolMessage
  | CanonicalFunctionMessage;

interface MessageBase {
  /** Prompt caching on the whole message (LiteLLM's form): its last block is the breakpoint. */
  cache_control?: unknown;
  extra?: Extra;
}

/** Instructions, wherever they are in the conversation (providers collect them in order). */
export interface CanonicalSystemMessage extends MessageBase {
  role: 'system';
  content: string | CanonicalTextPart[];
  name?: string;
  /** The client sent role `developer`, OpenAI's name for system instructions on newer models. */
  developer?: true;
}

export interface CanonicalUserMessage extends MessageBase {
  role: 'user';
  content: string | CanonicalUserPart[];
  name?: string;
}

export interface CanonicalAssistantMessage extends MessageBase {
  role: 'assistant';
  content?: string | CanonicalAssistantPart[] | null;
  refusal?: string | null;
  tool_calls?: CanonicalToolCall[];
  name?: string;
  /** Reasoning round trip (docs/providers.md "Reasoning round trip"): the model's reasoning text and its signature. */
  reasoning_content?: string | null;
  reasoning_signature?: string | null;
}

export interface CanonicalToolMessage extends MessageBase {
  role: 'tool';
  content: string | CanonicalTextPart[];
  tool_call_id: string;
}

/** OpenAI's deprecated function result: answers the function `name`, with no call id. */
export interface CanonicalFunctionMessage extends MessageBase {
  role: 'function';
  name: string;
  content: string | null;
}

export interface CanonicalToolCall {
  id: string;
  type: 'function';
  /** `arguments` is the JSON text as the model (or client) wrote it; providers parse it. */
  function: { name: string; arguments: string };
}

export interface CanonicalTextPart {
  type: 'text';
  text: string;
  cache_control?: unknown;
  extra?: Extra;
}

export interface CanonicalImagePart {
  type: 'image_url';
  /** An http(s) URL or a data URL; which ones a provider can take is its business. */
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

export interface CanonicalAudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: string };
}

export interface CanonicalFilePart {
  type: 'file';
  file: CanonicalFile;
}

/** A file inline (`file_data`, a data URL) or by an upstream's file id. */
export interface CanonicalFile {
  file_data?: string;
  file_id?: string;
  filename?: string;
  extra?: Extra;
}

export type CanonicalUserPart = CanonicalTextPart | CanonicalImagePart | CanonicalAudioPart | CanonicalFilePart;

export interface CanonicalRefusalPart {
  type: 'refusal';
  refusal: string;
  extra?: Extra;
}

/**
 * An assistant part of a type sluice does not model, as sent (Mistral's `thinking` chunks in a
 * replayed turn): an OpenAI-compatible upstream receives it, a native provider refuses it naming it.
 */
export interface CanonicalOpaquePart {
  type: string;
  [field: string]: unknown;
}

export type CanonicalAssistantPart = CanonicalTextPart | CanonicalRefusalPart | CanonicalOpaquePart;

export interface CanonicalFunctionTool {
  type: 'function';
  function: {
    name: string;
    description?: string;
    /** A JSON Schema, passed to each provider untouched. */
    parameters?: Record<string, unknown>;
    strict?: boolean | null;
  };
}

/**
 * A tool the upstream runs itself (OpenRouter's `openrouter:web_search`), as sent: passed to
 * OpenAI-compatible upstreams; a native provider answers 400 naming it, or drops it (drop_params).
 */
export interface CanonicalHostedTool {
  type: string;
  [field: string]: unknown;
}

export type CanonicalTool = CanonicalFunctionTool | CanonicalHostedTool;

export type CanonicalToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type CanonicalResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null };
    };
