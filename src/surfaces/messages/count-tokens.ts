import { messagesRelayOf } from '../../providers/messages-relay-of.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { countPromptTokens } from '../../accounting/count-tokens.ts';
import { errors } from '../../errors/catalog.ts';
import { toGatewayError } from '../../errors/gateway-error.ts';
import { logInternalError } from '../../errors/log-internal-error.ts';
import { anthropicErrorStatus, renderAnthropicError } from '../../protocol/anthropic-errors.ts';
import { parseCountTokensRequest } from './parse-request.ts';
import { messagesToCanonical } from './to-canonical.ts';
import type { Caller } from '../../admission/admission.ts';
import type { PipelineContext } from '../../pipeline/context.ts';
import { createExchange } from '../../pipeline/exchange.ts';

/** How long a count may take (the provider's, or the local one) before the client gets a 504. */
const COUNT_DEADLINE_MS = 30_000;

/**
 * POST /v1/messages/count_tokens for every provider: Anthropic's own count_tokens for Anthropic
 * (the body as sent), Gemini's countTokens for Gemini, and elsewhere sluice's local count of the
 * prompt, flagged `"estimated": true` (Anthropic's answer has only `input_tokens`). Counting is
 * free: it is not a model request, so it writes no ledger row and spends no budget, but it needs
 * a key that may use the model.
 */
export async function handleCountTokens(
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  readBody: () => Promise<unknown>,
  ctx: PipelineContext,
): Promise<void> {
  const exchange = createExchange(res, requestId, renderAnthropicError, anthropicErrorStatus);
  const signal = AbortSignal.timeout(COUNT_DEADLINE_MS);
  try {
    const caller = await ctx.authenticate(req);
    const body = await readBody();
    const parsed = parseCountTokensRequest(body);
    // The target the request would try first (a route's healthiest, an alias's, provider/model).
    const [first] = ctx.router.order(ctx.router.plan(parsed.model));
    refuseDisallowed(caller, first.via, first.key);
    const { target } = first;
    const call = { signal, requestId };
    const relay = messagesRelayOf(target.adapter, target.model);
    if (relay) {
      const beta = req.headers['anthropic-beta'];
      const count = await relay.countTokens(body as Record<string, unknown>, target.model, {
        ...call,
        beta: Array.isArray(beta) ? beta.join(',') : beta,
      });
      exchange.sendJson(200, { input_tokens: count });
      return;
    }
    const request = messagesToCanonical(parsed, { dropParams: true, keepCacheControl: false });
    if (target.adapter.countTokens) {
      exchange.sendJson(200, { input_tokens: await target.adapter.countTokens(request, target.model, call) });
      return;
    }
    exchange.sendJson(200, { input_tokens: await countPromptTokens(request, target.model, signal), estimated: true });
  } catch (err) {
    const failure = toGatewayError(signal.aborted ? errors.deadline(COUNT_DEADLINE_MS / 1000) : err);
    if (failure.code === 'internal_error') logInternalError(ctx.accounting.log, requestId, err);
    exchange.sendError(failure);
  }
}

/** The key's allowed models hold here too (the name the target came from, or its provider/model). */
function refuseDisallowed(caller: Caller, via: string, key: string): void {
  const allowed = caller.allowedModels;
  if (allowed && !allowed.includes(via) && !allowed.includes(key)) throw errors.modelNotAllowed(via);
}
