/**
 * A vector as OpenAI's `encoding_format: "base64"` sends it: the float32 values, little-endian,
 * base64-encoded (what the openai SDKs decode, and what OpenAI answers with).
 */
export function encodeFloat32Base64(values: readonly number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  for (let i = 0; i < values.length; i++) bytes.writeFloatLE(values[i], i * 4);
  return bytes.toString('base64');
}

/** The inverse: a base64 vector an upstream sent, as floats, for a client that asked for floats. */
export function decodeFloat32Base64(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  return Array.from({ length: Math.floor(bytes.length / 4) }, (_, i) => bytes.readFloatLE(i * 4));
}

export interface EmbeddingsBody {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/**
 * The OpenAI response body, each vector in the encoding the client asked for: floats are encoded
 * when it asked for base64, and a base64 vector (only an OpenAI-compatible upstream sends one,
 * when told to or on its own) is decoded when it asked for floats.
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
      embedding: inFormat(vector, format),
    })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

function inFormat(vector: number[] | string, format: 'float' | 'base64'): number[] | string {
  if (format === 'base64') return typeof vector === 'string' ? vector : encodeFloat32Base64(vector);
  return typeof vector === 'string' ? decodeFloat32Base64(vector) : vector;
}
