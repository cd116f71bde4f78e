import type { RunScope } from '../../pipeline/model-operation.ts';
import type { RunStreamOptions, StreamTimings } from '../../pipeline/run-stream.ts';
import { MESSAGES_SSE_DIALECT, MessagesEventEncoder } from './encode-stream.ts';

/** What every run of POST /v1/messages is told: streamed or not, and the stream's timings. */
export interface RunMessagesOptions {
  streamed: boolean;
  timings: StreamTimings;
}

/** The encoder of sluice's own Messages frames and message, named after the request. */
export function messageEncoder(run: RunScope): MessagesEventEncoder {
  return new MessagesEventEncoder({ id: `msg_${run.exchange.requestId}`, model: run.target.requested });
}

/** How every Messages stream runs, relayed or built here. */
export function streamOptions(run: RunScope, options: RunMessagesOptions): RunStreamOptions {
  return {
    provider: run.target.provider,
    timings: options.timings,
    dialect: MESSAGES_SSE_DIALECT,
    onAcknowledged: () => run.accountant.markAcknowledged(),
  };
}
