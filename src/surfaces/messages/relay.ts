import type { GatewayError } from '../../errors/gateway-error.ts';
import { MESSAGES_SSE_DIALECT, MessagesEventEncoder, type MessageIdentity } from './encode-stream.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { messagesRelayReading } from '../../routing/relay-readings.ts';
import { relayedBodyFor } from '../../routing/relayed-body.ts';
import { completeEvents } from '../../pipeline/complete-events.ts';
import { MessagesRelaySurface, MessagesStreamSurface } from './relay-surface.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';
import { openRouted, routedRelay } from '../../pipeline/routed-calls.ts';
import { capRelayedOutput } from '../../pipeline/output-cap.ts';
import { type RunStreamOptions, runStream, type StreamTimings } from '../../pipeline/run-stream.ts';

export interface RunMessagesOptions {
  streamed: boolean;
  timings: StreamTimings;
}

function identityOf(run: RunScope): MessageIdentity {
  return { id: `msg_${run.exchange.requestId}`, model: run.target.requested };
}

function streamOptions(run: RunScope, options: RunMessagesOptions): RunStreamOptions {
  return {
    provider: run.target.provider,
    timings: options.timings,
    dialect: MESSAGES_SSE_DIALECT,
    onAcknowledged: () => run.accountant.markAcknowledged(),
  };
}

/** POST /v1/messages over canonical events: any provider, stream or not. */
export async function runMessages(
  run: RunScope,
  request: CanonicalRequest,
  options: RunMessagesOptions,
): Promise<GatewayError | null> {
  const { accountant, exchange } = run;
  const encoder = new MessagesEventEncoder(identityOf(run));
  if (options.streamed) {
    return runStream(
      exchange,
      run.scope,
      // Over the request's candidates, as chat streams are: a route falls back before the first output.
      openRouted(run, request),
      new MessagesStreamSurface(encoder, accountant),
      streamOptions(run, options),
    );
  }
  const result = await completeEvents(run, request);
  if ('failure' in result) return result.failure;
  for (const event of result.events) encoder.encode(event);
  // A response without usage gets sluice's own count, like a stream does.
  exchange.sendJson(200, encoder.message(await accountant.usage(run.scope.signal)));
  return null;
}

/**
 * POST /v1/messages relayed to Anthropic: the body as sent (model name aside), the answer as it
 * came. Over the route's candidates that are relayed too: before the first output a failure (a
 * connect error, 408/429/5xx, 529, an `event: error`, no output within the TTFT timeout) moves on
 * to the next; a target of another kind is not tried (its answer could not be relayed byte for byte).
 */
export async function relayMessages(
  run: RunScope,
  body: Record<string, unknown>,
  beta: string | undefined,
  options: RunMessagesOptions,
): Promise<GatewayError | null> {
  const { accountant, exchange } = run;
  const relay = routedRelay(
    run,
    (c) => c.target.adapter.messages,
    { beta },
    (event) => accountant.observe(event),
  );
  if (options.streamed) {
    return runStream(
      exchange,
      run.scope,
      relay.stream((candidate) => relayedBodyFor(body, candidate, 'messages'), messagesRelayReading),
      new MessagesRelaySurface(accountant, new MessagesEventEncoder(identityOf(run))),
      streamOptions(run, options),
    );
  }
  // The route's params first, then the budget's cap: a target's own limit cannot pass what the reservation pays for.
  const outcome = await relay.complete((candidate) =>
    capRelayedOutput(relayedBodyFor(body, candidate, 'messages'), run.admission.maxOutputTokens, 'max_tokens'),
  );
  if (!outcome.ok) return outcome.failure;
  accountant.markAcknowledged();
  for (const event of outcome.value.events) accountant.observe(event);
  exchange.sendJson(200, outcome.value.message);
  return null;
}
