import type { ServerResponse } from 'node:http';
import { errors } from '../errors/catalog.ts';
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import type { Usage } from '../protocol/canonical/usage.ts';
import { ChatChunkEncoder } from '../protocol/openai-chat/encode-chunks.ts';
import type { ChatRequest } from '../protocol/openai-chat/request-schema.ts';
import { StreamSession, type StreamTimings } from '../protocol/sse/stream-session.ts';
import type { ResolvedModel } from '../providers/registry.ts';
import { sendError } from '../server/http-io.ts';

export interface StreamChatOptions {
  requestId: string;
  created: number;
  timings: StreamTimings;
  includeUsage: boolean;
  errorStyle: 'data' | 'event';
  /** Open sessions, so a shutdown can end them cleanly. */
  sessions: Set<StreamSession>;
}

export interface StreamOutcome {
  usage: Usage | null;
  error: GatewayError | null;
}

/**
 * Provider events -> chat chunks -> the client, with every exit path ending the stream: frames
 * then `[DONE]`, an error frame then `[DONE]`, an HTTP error if nothing was sent yet, or nothing
 * at all when the client is gone (its upstream request is aborted by then).
 */
export async function streamChat(
  res: ServerResponse,
  request: ChatRequest,
  target: ResolvedModel,
  options: StreamChatOptions,
): Promise<StreamOutcome> {
  const session = new StreamSession(res, { requestId: options.requestId, ...options.timings });
  options.sessions.add(session);
  const encoder = new ChatChunkEncoder({
    id: `chatcmpl-${options.requestId}`,
    created: options.created,
    model: target.requested,
    includeUsage: options.includeUsage,
    errorStyle: options.errorStyle,
  });
  let usage: Usage | null = null;
  let failure: GatewayError | null = null;
  try {
    const batches = await target.adapter.stream(request, target.model, {
      signal: session.signal,
      requestId: options.requestId,
    });
    for await (const batch of batches) {
      session.upstreamActivity();
      let frames = '';
      for (const event of batch) {
        if (event.type === 'usage') usage = event.usage;
        else if (event.type === 'error') {
          failure = event.error;
          break;
        } else frames += encoder.encode(event);
      }
      // One write per upstream read: the frames of a read leave together.
      session.write(frames);
      if (failure || session.ended) break;
      if (session.congested) await session.waitForDrain();
    }
    if (!failure && !encoder.complete && !session.signal.aborted) failure = errors.truncated(target.provider);
  } catch (err) {
    failure = toGatewayError(session.signal.aborted ? session.signal.reason : err);
  } finally {
    options.sessions.delete(session);
  }
  if (session.signal.aborted && !failure) failure = toGatewayError(session.signal.reason);

  if (!failure) session.finish(encoder.usageFrame(usage));
  else if (session.ended) session.dispose();
  else if (!session.committed) {
    session.dispose();
    sendError(res, failure, options.requestId);
  } else session.fail(encoder.errorFrame(failure));
  return { usage, error: failure };
}
