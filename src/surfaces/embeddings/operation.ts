import { countInputTokens } from '../../accounting/count-tokens.ts';
import { estimateInputTokens } from '../../accounting/estimate-tokens.ts';
import { renderErrorBody } from '../../errors/render.ts';
import type { EmbeddingRequest } from '../../protocol/canonical/embedding-request.ts';
import type { ModelOperation, PreparedRequest } from '../../pipeline/model-operation.ts';
import { completeEmbeddings } from './complete.ts';
import { parseEmbeddingsRequest } from './parse-request.ts';
import { embeddingsToCanonical } from './to-canonical.ts';

/**
 * An embeddings request's tokens as an embedding model counts them: each input on its own, with
 * no chat framing (one chat message of ["Ruby", "Python", "JavaScript"] counts 12 tokens, OpenAI
 * counts 3). The admission charges and reserves the fast estimate; the record, when the provider
 * reports no count (Gemini's batchEmbedContents), takes the BPE count, marked estimated.
 */
function inputCount(request: EmbeddingRequest): PreparedRequest['input'] {
  return {
    estimatedTokens: estimateInputTokens(request.input),
    count: (model, signal, limits) => countInputTokens(request.input, model, signal, limits),
  };
}

/**
 * POST /v1/embeddings: OpenAI's embeddings API over every provider that has an `embed` method,
 * through the same lifecycle as chat (auth, routing, limits, one ledger row on the 'embeddings'
 * surface). Never streamed.
 */
export const createEmbeddings: ModelOperation = {
  surface: 'embeddings',
  renderError: renderErrorBody,
  parse(body, ctx) {
    const { model, request } = parseEmbeddingsRequest(body);
    const prompt = embeddingsToCanonical(model, request);
    return {
      model,
      stickyKey: request.user,
      prepare: async () => ({
        request: prompt,
        streamed: false,
        deadlineMs: ctx.config.stream.deadline_s * 1000,
        input: inputCount(request),
        run: (run) => completeEmbeddings(run, request),
      }),
    };
  },
};
