import type { ServerResponse } from 'node:http';
import type { Accountant } from '../accounting/accountant.ts';
import { errors } from '../errors/catalog.ts';
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { accountingTail, usageStartFrame } from '../protocol/openai-chat/accounting-frames.ts';
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
  profile: 'openai' | 'accounting';
  usageExtensions: boolean;
  accountant: Accountant;
  /** Open sessions, so a shutdown can end them cleanly. */
  sessions: Set<StreamSession>;
}

/**
 * Provider events -> chat chunks -> the client, with every exit path ending the stream: frames
 * then `[DONE]`, an error frame then `[DONE]`, an HTTP error if nothing was sent yet, or nothing
 * at all when the client is gone (its upstream request is aborted by then). Returns the failure,
 * if any, for the ledger.
 */
export async function streamChat(
  res: ServerResponse,
  request: ChatRequest,
  target: ResolvedModel,
  options: StreamChatOptions,
): Promise<GatewayError | null> {
  const { accountant } = options;
  const accounting = options.profile === 'accounting';
  const identity = { requestId: options.requestId, provider: target.provider, model: target.model };
  const session = new StreamSession(res, { requestId: options.requestId, ...options.timings });
  options.sessions.add(session);
  const encoder = new ChatChunkEncoder({
    id: `chatcmpl-${options.requestId}`,
    created: options.created,
    model: target.requested,
    includeUsage: options.includeUsage,
    errorStyle: options.errorStyle,
    profile: options.profile,
    provider: target.provider,
    usageExtensions: options.usageExtensions,
  });
  // The accounting profile announces the request (usage_start) with its first frame.
  let announced = !accounting;
  let failure: GatewayError | null = null;
  try {
    const batches = await target.adapter.stream(request, target.model, {
      signal: session.signal,
      requestId: options.requestId,
    });
    accountant.markAcknowledged();
    for await (const batch of batches) {
      session.upstreamActivity();
      let frames = '';
      for (const event of batch) {
        accountant.observe(event);
        if (event.type === 'error') {
          failure = event.error;
          break;
        }
        frames += encoder.encode(event);
      }
      if (frames && !announced) {
        announced = true;
        frames = usageStartFrame(identity, await accountant.inputTokens()) + frames;
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

  if (!failure) {
    const usage = await accountant.usage();
    const { costUsd } = accountant.cost(usage);
    session.finish(
      accounting
        ? accountingTail(identity, usage, costUsd, Date.now() - accountant.startedAt)
        : encoder.usageFrame(usage, costUsd),
    );
  } else if (session.ended) session.dispose();
  else if (!session.committed) {
    session.dispose();
    sendError(res, failure, options.requestId);
  } else session.fail(encoder.errorFrame(failure));
  return failure;
}
