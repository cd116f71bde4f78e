import { countInputTokens } from '../../accounting/count-tokens.ts';
import { estimateInputTokens } from '../../accounting/estimate-tokens.ts';
import { errors } from '../../errors/catalog.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { renderErrorBody } from '../../errors/render.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { encodeEmbeddings } from './encode-response.ts';
import { parseEmbeddingsRequest } from './parse-request.ts';
import type { EmbeddingRequest } from '../../protocol/canonical/embedding-request.ts';
import type { EmbeddingResult } from '../../providers/types.ts';
import { routedComplete } from '../../routing/route-complete.ts';
import { callOnce } from '../../pipeline/call-once.ts';
import type { ModelOperation, PreparedRequest, RunScope } from '../../pipeline/model-operation.ts';

/**
 * The canonical request of an embeddings request: its texts as one user message, what the ledger
 * keeps as its prompt (store_content) and a trace records. Its tokens are not counted from it
 * (inputCount).
 */
function promptOf(model: string, request: EmbeddingRequest): CanonicalRequest {
  const text = request.input.map((one) => (typeof one === 'string' ? one : one.join(' '))).join('\n');
  return { model, messages: [{ role: 'user', content: text }], ...(request.user !== undefined ? { user: request.user } : {}) };
}

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
    const prompt = promptOf(model, request);
    return {
      model,
      stickyKey: request.user,
      prepare: async () => ({
        request: prompt,
        streamed: false,
        deadlineMs: ctx.config.stream.deadline_s * 1000,
        input: inputCount(request),
        run: (run) => embed(run, request),
      }),
    };
  },
};

async function embed(run: RunScope, request: EmbeddingRequest): Promise<GatewayError | null> {
  const { exchange, accountant } = run;
  let answer: EmbeddingResult | undefined;
  // Routing's non-streamed attempt loop: a target that fails over falls back like a chat does.
  const outcome = await callOnce(exchange, run.scope, () =>
    routedComplete(
      { candidates: run.candidates, health: run.ctx.router.health, log: run.attempts, signal: run.scope.signal },
      async (candidate, signal, traceHeaders) => {
        const { adapter, provider, model } = candidate.target;
        if (!adapter.embed) {
          throw errors.invalidRequest(
            `${provider}/${model} does not offer embeddings: the ${provider} provider has no embeddings API in sluice.`,
            'model',
          );
        }
        answer = await adapter.embed(request, model, {
          signal,
          requestId: exchange.requestId,
          onResponse: run.scope.upstreamResponded,
          traceHeaders,
        });
        const events: CanonicalEvent[] = [{ type: 'start' }];
        if (answer.inputTokens !== undefined) {
          events.push({ type: 'usage', usage: { inputTokens: answer.inputTokens, outputTokens: 0, source: 'provider' } });
        }
        return events;
      },
      (event) => accountant.observe(event),
    ),
  );
  if (!outcome.ok) return outcome.failure;
  accountant.markAcknowledged();
  for (const event of outcome.value) if (event.type !== 'fallback') accountant.observe(event);
  // Set by the candidate that answered (the attempt loop returns only once one did).
  const result = answer as EmbeddingResult;
  const usage = await accountant.usage(run.scope.signal);
  exchange.sendJson(200, encodeEmbeddings(result.embeddings, request.encodingFormat, run.target.requested, usage.inputTokens));
  return null;
}
