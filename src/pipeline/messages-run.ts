import type { GatewayError } from '../errors/gateway-error.ts';
import {
  MESSAGES_SSE_DIALECT,
  MessagesEventEncoder,
  type MessageIdentity,
} from '../protocol/anthropic-messages/encode-events.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { MessagesRelay } from '../providers/types.ts';
import { callOnce } from './call-once.ts';
import { completeEvents } from './complete-chat.ts';
import { MessagesRelaySurface, MessagesStreamSurface } from './messages-surface.ts';
import type { RunScope } from './model-operation.ts';
import { openRouted } from './routed-calls.ts';
import { capRelayedOutput } from './output-cap.ts';
import { type RunStreamOptions, runStream, type StreamTimings } from './run-stream.ts';

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

/** POST /v1/messages relayed to Anthropic: the body as sent (model name aside), the answer as it came. */
export async function relayMessages(
  run: RunScope,
  body: Record<string, unknown>,
  relay: MessagesRelay,
  beta: string | undefined,
  options: RunMessagesOptions,
): Promise<GatewayError | null> {
  const { accountant, exchange, target } = run;
  const call = (signal: AbortSignal) => ({
    signal,
    requestId: exchange.requestId,
    onResponse: run.scope.upstreamResponded,
    beta,
  });
  if (options.streamed) {
    return runStream(
      exchange,
      run.scope,
      (signal) => relay.stream(body, target.model, call(signal)),
      new MessagesRelaySurface(accountant, new MessagesEventEncoder(identityOf(run))),
      streamOptions(run, options),
    );
  }
  const sent = capRelayedOutput(body, run.admission.maxOutputTokens, 'max_tokens');
  const outcome = await callOnce(exchange, run.scope, (signal) => relay.complete(sent, target.model, call(signal)));
  if (!outcome.ok) return outcome.failure;
  accountant.markAcknowledged();
  for (const event of outcome.value.events) accountant.observe(event);
  exchange.sendJson(200, outcome.value.message);
  return null;
}
