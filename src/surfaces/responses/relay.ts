import type { GatewayError } from '../../errors/gateway-error.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';
import { capRelayedOutput } from '../../pipeline/output-cap.ts';
import { routedRelay } from '../../pipeline/routed-calls.ts';
import { runStream } from '../../pipeline/run-stream.ts';
import { relayedBodyFor } from '../../routing/relayed-body.ts';
import { wholeResponseEvents } from './relay-output.ts';
import { responsesRelayReading } from './relay-reading.ts';
import { fromResponsesUsage, ResponsesRelaySurface } from './relay-surface.ts';
import { type RunResponsesOptions, streamOptions } from './run-options.ts';
import { saveRelayedResponse } from './save-response.ts';
import { returnedIds } from './stored-ids.ts';

/**
 * POST /v1/responses relayed to an upstream that speaks it (events exactly as sent). Over the
 * route's candidates that relay the Responses API too: before the first output item a failure (a
 * connect error, 408/429/5xx, an `error` or response.failed event, no output within the TTFT
 * timeout) moves on to the next; a target that does not relay it is not tried.
 */
export async function relayResponses(
  run: RunScope,
  body: Record<string, unknown>,
  options: RunResponsesOptions,
): Promise<GatewayError | null> {
  const { accountant, exchange, target } = run;
  let provider = target.provider;
  const relay = routedRelay(
    run,
    (c) => c.target.adapter.responses,
    {},
    (event) => {
      provider = event.to.provider;
      accountant.observe(event);
    },
  );
  if (body.stream === true) {
    const surface = new ResponsesRelaySurface(accountant, () => provider, options.recordIds);
    const failure = await runStream(
      exchange,
      run.scope,
      relay.stream((candidate) => relayedBodyFor(body, candidate, 'responses'), responsesRelayReading),
      surface,
      streamOptions(run, options),
    );
    // Whatever the upstream handed out, the response failed or not: it may have stored it.
    options.recordIds?.(surface.laterIds());
    if (surface.finalResponse) traceOutput(run, surface.finalResponse);
    if (!failure && surface.finalResponse) saveRelayedResponse(run, options, surface.finalResponse);
    return failure;
  }
  // The route's params first, then the budget's cap: a target's own limit cannot pass what the reservation pays for.
  const outcome = await relay.complete((candidate) =>
    capRelayedOutput(relayedBodyFor(body, candidate, 'responses'), run.admission.maxOutputTokens),
  );
  if (!outcome.ok) return outcome.failure;
  const response = outcome.value;
  accountant.markAcknowledged();
  for (const event of wholeResponseEvents(response)) accountant.observe(event);
  const usage = response.usage as Parameters<typeof fromResponsesUsage>[0] | undefined;
  if (usage) accountant.observe({ type: 'usage', usage: fromResponsesUsage(usage) });
  // Before the client has the ids: a continuation at once finds them recorded (or being recorded).
  options.recordIds?.(returnedIds(response));
  exchange.sendJson(200, response);
  traceOutput(run, response);
  saveRelayedResponse(run, options, response);
  return null;
}

/**
 * A relayed answer's output items name every call, which its deltas do not: the trace records
 * them, unless the upstream listed none (then what its deltas said).
 */
function traceOutput(run: RunScope, response: Record<string, unknown>): void {
  if (Array.isArray(response.output) && response.output.length > 0) run.transcript?.outputItems(response.output);
}
