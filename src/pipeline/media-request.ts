import { countInputTokens } from '../accounting/count-tokens.ts';
import { estimateInputTokens } from '../accounting/estimate-tokens.ts';
import type { MediaUnits } from '../protocol/canonical/usage.ts';
import type { PipelineContext } from './context.ts';
import type { ParsedRequest, PreparedRequest } from './model-operation.ts';

/** What an images or audio request tells the lifecycle before it runs. */
export interface MediaRequest {
  model: string;
  /** Its text (a prompt, the text to speak): its input tokens, and its prompt in the ledger and traces. */
  text: string;
  streamed: boolean;
  /** The images asked for: each reserves its output. */
  n?: number;
  user?: string;
  /** The units the body tells the request will be billed for: the admission reserves them. */
  units?: MediaUnits;
  run: PreparedRequest['run'];
}

/**
 * The parsed request of an images or audio request (a sticky route hashes its `user`). Its canonical request is its text as one
 * user message, what the ledger keeps as its prompt (store_content) and a trace records, and `n`;
 * what the provider is sent is the body as the client sent it. Its input tokens are the text's
 * alone, with no chat framing: the fast estimate the admission charges and reserves, the BPE
 * count the record takes when the upstream reports none.
 */
export function mediaParsed(ctx: PipelineContext, request: MediaRequest): ParsedRequest {
  return {
    model: request.model,
    ...(request.user !== undefined ? { stickyKey: request.user } : {}),
    prepare: async () => mediaPrepared(ctx, request),
  };
}

function mediaPrepared(ctx: PipelineContext, request: MediaRequest): PreparedRequest {
  const texts = request.text === '' ? [] : [request.text];
  return {
    request: {
      model: request.model,
      messages: [{ role: 'user', content: request.text }],
      ...(request.n !== undefined ? { n: request.n } : {}),
      ...(request.user !== undefined ? { user: request.user } : {}),
    },
    streamed: request.streamed,
    deadlineMs: ctx.config.stream.deadline_s * 1000,
    input: {
      estimatedTokens: estimateInputTokens(texts),
      count: (model, signal, limits) => countInputTokens(texts, model, signal, limits),
    },
    ...(request.units ? { units: request.units } : {}),
    run: request.run,
  };
}
