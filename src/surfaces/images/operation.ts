import { renderErrorBody } from '../../errors/render.ts';
import { type MediaReaders, relayMedia } from '../../pipeline/media-relay.ts';
import { mediaParsed } from '../../pipeline/media-request.ts';
import type { ModelOperation, ParsedRequest } from '../../pipeline/model-operation.ts';
import type { PipelineContext } from '../../pipeline/context.ts';
import { formOf, type MultipartBody } from '../../protocol/http/read-multipart-body.ts';
import type { MediaCall, MediaPath } from '../../providers/types.ts';
import { type ImagesRequest, parseImageEdit, parseImageGeneration } from './parse-request.ts';
import { imageEventUsage, imagesUsage } from './usage.ts';

/** An images answer's usage: a whole answer's, or that of a stream's completed events. */
const readers: MediaReaders = { whole: (answer) => ({ usage: imagesUsage(answer.json) }), event: imageEventUsage };

/**
 * A parsed images request through the lifecycle: reserved as `n` images (and their output tokens),
 * relayed to the target's own images endpoint, streamed as it came when it asked for `stream`.
 */
function imagesRequest(path: MediaPath, request: ImagesRequest, ctx: PipelineContext): ParsedRequest {
  const body = 'json' in request.body ? request.body : { form: formOf(request.body.form) };
  const call: MediaCall = { path, body, accept: request.stream ? 'text/event-stream' : 'application/json' };
  return mediaParsed(ctx, {
    model: request.model,
    text: request.prompt,
    streamed: request.stream,
    n: request.n,
    ...(request.user !== undefined ? { user: request.user } : {}),
    units: { images: request.n },
    run: (run) => relayMedia(run, call, readers),
  });
}

/** POST /v1/images/generations: OpenAI's images API over every provider that serves it (ledger surface `images`). */
export const createImages: ModelOperation = {
  surface: 'images',
  renderError: renderErrorBody,
  parse: (body, ctx) => imagesRequest('images/generations', parseImageGeneration(body), ctx),
};

/** POST /v1/images/edits (multipart: the images and mask as files), the same way. */
export const editImages: ModelOperation = {
  surface: 'images',
  renderError: renderErrorBody,
  parse: (body, ctx) => imagesRequest('images/edits', parseImageEdit(body as MultipartBody), ctx),
};
