/** Which API a stream speaks: chat completions (either profile), the Responses API, Anthropic's Messages API. */
export type StreamSurface = 'chat' | 'responses' | 'messages';

/** One frame as it came off the wire: its `event:` name when named, its `id:`, its JSON payload. */
export interface StreamFrame {
  event: string | undefined;
  id: string | undefined;
  data: Record<string, unknown>;
}

/** A tool call, its argument fragments joined in the order they came. */
export interface StreamToolCall {
  /** The call's position among the message's tool calls (chat's `index`, the output or block index elsewhere). */
  index: number;
  id: string;
  name: string;
  /** The arguments as JSON text, as the model wrote them (parse them yourself: a cut stream leaves them partial). */
  arguments: string;
}

/** Token counts, whichever surface reported them. */
export interface StreamUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
  cacheCreationInputTokens?: number;
  reasoningTokens?: number;
  /** True when sluice estimated the counts (the provider reported none). */
  estimated?: boolean;
}

/** What a whole stream said, accumulated frame by frame. */
export interface StreamMessage {
  surface: StreamSurface | undefined;
  id: string | undefined;
  model: string | undefined;
  text: string;
  reasoning: string;
  /** The provider's reasoning signature, to send back with the reasoning on the next turn. */
  reasoningSignature: string | undefined;
  toolCalls: StreamToolCall[];
  /** The surface's own word: `stop`/`tool_calls`, `end_turn`/`tool_use`, or the response's status. */
  finishReason: string | undefined;
  usage: StreamUsage | undefined;
  /** The cost in USD, when sluice sent it (the accounting profile, or usage extensions). */
  costUsd: number | undefined;
}

export function emptyMessage(): StreamMessage {
  return {
    surface: undefined,
    id: undefined,
    model: undefined,
    text: '',
    reasoning: '',
    reasoningSignature: undefined,
    toolCalls: [],
    finishReason: undefined,
    usage: undefined,
    costUsd: undefined,
  };
}
