import { errors } from '../../errors/catalog.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { EmbeddingRequest } from '../../protocol/canonical/embedding-request.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { EmbeddingResult } from '../../providers/types.ts';
import { routedComplete } from '../../routing/route-complete.ts';
import { callOnce } from '../../pipeline/call-once.ts';
import { keyContext } from '../../pipeline/routed-calls.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';
import { encodeEmbeddings } from './encode-response.ts';

/** POST /v1/embeddings, never streamed: the vectors of the first candidate that answers. */
export async function completeEmbeddings(run: RunScope, request: EmbeddingRequest): Promise<GatewayError | null> {
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
          traceHeaders,
          ...keyContext(run),
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
