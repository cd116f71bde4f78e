import { messagesRelayOf } from '../../providers/messages-relay-of.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';
import { capRelayedOutput } from '../../pipeline/output-cap.ts';
import { routedRelay } from '../../pipeline/routed-calls.ts';
import { runStream } from '../../pipeline/run-stream.ts';
import { relayedBodyFor } from '../../routing/relayed-body.ts';
import { messagesRelayReading } from './relay-reading.ts';
import { MessagesRelaySurface } from './relay-surface.ts';
import { messageEncoder, type RunMessagesOptions, streamOptions } from './run-options.ts';

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
    (c) => messagesRelayOf(c.target.adapter, c.target.model),
    { beta },
    (event) => accountant.observe(event),
  );
  if (options.streamed) {
    return runStream(
      exchange,
      run.scope,
      relay.stream((candidate) => relayedBodyFor(body, candidate, 'messages'), messagesRelayReading),
      new MessagesRelaySurface(accountant, messageEncoder(run)),
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
