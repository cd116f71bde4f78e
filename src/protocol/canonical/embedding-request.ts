/** An embeddings request as every provider takes it (parsed from /v1/embeddings by surfaces/embeddings). */
export interface EmbeddingRequest {
  /** One entry per vector asked for: a text, or token ids (only OpenAI-compatible upstreams take those). */
  input: string[] | number[][];
  /** What the client sent as `input` (a string or an array): an OpenAI-compatible upstream gets it as sent. */
  rawInput: string | string[] | number[] | number[][];
  encodingFormat: 'float' | 'base64';
  dimensions?: number;
  user?: string;
  /** Fields the client sent beyond OpenAI's (a vLLM or Jina option): relayed to OpenAI-compatible upstreams only. */
  extra?: Record<string, unknown>;
}
