/**
 * A vector as OpenAI's `encoding_format: "base64"` sends it: the float32 values, little-endian,
 * base64-encoded (what the openai SDKs decode, and what OpenAI answers with).
 */
export function encodeFloat32Base64(values: readonly number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  for (let i = 0; i < values.length; i++) bytes.writeFloatLE(values[i], i * 4);
  return bytes.toString('base64');
}

export interface EmbeddingsBody {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/**
 * The OpenAI response body. Vectors come as the provider gave them; floats are encoded when the
 * client asked for base64 (only an OpenAI-compatible upstream encodes them itself).
 */
export function encodeEmbeddings(
  embeddings: readonly (number[] | string)[],
  format: 'float' | 'base64',
  model: string,
  promptTokens: number,
): EmbeddingsBody {
  return {
    object: 'list',
    data: embeddings.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: format === 'base64' && typeof vector !== 'string' ? encodeFloat32Base64(vector) : vector,
    })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}
