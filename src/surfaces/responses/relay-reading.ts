import type { GatewayError } from '../../errors/gateway-error.ts';
import { upstreamHttpError } from '../../errors/upstream-error.ts';
import type { RelayItem } from '../../providers/types.ts';
import type { StreamReading } from '../../routing/route-stream.ts';

/** Responses events that open a response without answering anything yet. */
const OPENING = new Set(['response.created', 'response.in_progress', 'response.queued']);

/**
 * A relayed Responses stream read frame by frame: response.created and in_progress are held
 * (dropped if the attempt fails, so the client sees one response), an `error` or response.failed
 * before any output item is a failure to fall back from, anything else is the answer.
 */
export const responsesRelayReading: StreamReading<RelayItem> = {
  verdict(batch, candidate) {
    for (const item of batch) {
      if ('error' in item) return item.error;
      const type = frameType(item.frame.event, item.frame.data);
      if (type !== undefined && OPENING.has(type)) continue;
      if (type === 'error' || type === 'response.failed') return failureOf(candidate.target.provider, type, item.frame.data);
      return 'answer';
    }
    return null;
  },
};

function frameType(event: string | undefined, data: string): string | undefined {
  if (event) return event;
  try {
    const type = (JSON.parse(data) as { type?: unknown }).type;
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}

/** The upstream's error (its code and message kept) as a 502: a target's failure, which may fall back. */
function failureOf(provider: string, type: string, data: string): GatewayError {
  let error: { code?: unknown; message?: unknown } | undefined;
  try {
    const body = JSON.parse(data) as {
      error?: typeof error;
      response?: { error?: typeof error };
      code?: unknown;
      message?: unknown;
    };
    error = type === 'error' ? (body.error ?? body) : body.response?.error;
  } catch {
    // An undecodable failure frame is still a failure; its text is not the client's to read.
  }
  return upstreamHttpError({
    provider,
    status: 502,
    // Reported inside the upstream's 200 stream.
    httpStatus: 200,
    message: typeof error?.message === 'string' ? error.message : `${provider} reported ${type} before any output.`,
    upstreamCode: typeof error?.code === 'string' ? error.code : null,
  });
}
