import type { EmbeddingRequest } from '../../protocol/canonical/embedding-request.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';

/**
 * The canonical request of an embeddings request: its texts as one user message, what the ledger
 * keeps as its prompt (store_content) and a trace records. Its tokens are not counted from it
 * (operation.ts: inputCount). What the provider is sent is the EmbeddingRequest itself.
 */
export function embeddingsToCanonical(model: string, request: EmbeddingRequest): CanonicalRequest {
  const text = request.input.map((one) => (typeof one === 'string' ? one : one.join(' '))).join('\n');
  return { model, messages: [{ role: 'user', content: text }], ...(request.user !== undefined ? { user: request.user } : {}) };
}
