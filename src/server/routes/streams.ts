import type { IncomingHttpHeaders } from 'node:http';
import { errors } from '../../errors/catalog.ts';
import { readableProjects } from '../../governance/keys/project-scope.ts';
import type { Resumable } from '../../pipeline/exchange.ts';
import { HEARTBEAT_FRAME } from '../../protocol/sse/frames.ts';
import type { RouteCall } from '../route-table.ts';

/** What makes a model request's stream resumable, when stream.resume is on. */
export function resumable({ ctx, requestId }: RouteCall): Resumable | undefined {
  if (!ctx.streams) return undefined;
  const { resume } = ctx.config.stream;
  return { recording: ctx.streams.recording(requestId), graceMs: resume.grace_s * 1000, eventIds: resume.event_ids };
}

/**
 * GET /v1/streams/{request_id} with `Last-Event-ID: n` (docs/streams/resume.md): the frames of
 * a stream after the one with id n, exactly as its client would have had them; while the stream
 * still runs, its new frames as they come, to `[DONE]`. The upstream is not called again: the
 * frames come from the buffer the stream was recorded into (src/resume). The id is the request's
 * X-Request-ID, or the `chatcmpl-…` / `resp_…` id its frames carry. A project key resumes its
 * project's streams only (another project's is a 404, like an unknown one); a stream no longer
 * kept is a 410 that says why.
 */
export async function handleResumeStream({ req, res, ctx, param, requestId, caller }: RouteCall): Promise<void> {
  const projects = readableProjects(caller);
  const afterId = lastEventId(req.headers);
  const id = param.replace(/^(chatcmpl-|resp_)/, '');
  const lookup = ctx.streams ? await ctx.streams.find(id) : { state: 'unknown' as const };
  if (lookup.state === 'unknown' || (projects !== undefined && !projects.includes(lookup.projectId ?? '')))
    throw errors.streamNotFound(param);
  if (lookup.state === 'gone') throw errors.streamExpired(param, lookup.why);
  const { stream } = lookup;
  if (stream.ended && afterId > stream.lastId) {
    throw errors.invalidRequest(`Last-Event-ID ${afterId} is after the stream's last event (${stream.lastId}).`, 'Last-Event-ID');
  }
  res.writeHead(200, {
    'Content-Type': stream.contentType,
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'X-Request-ID': requestId,
    'X-Accel-Buffering': 'no',
  });
  const heartbeatMs = ctx.config.stream.heartbeat_s * 1000;
  await new Promise<void>((resolve) => {
    const heartbeat = heartbeatMs > 0 ? setInterval(() => res.write(HEARTBEAT_FRAME), heartbeatMs) : undefined;
    const finish = () => {
      clearInterval(heartbeat);
      res.off('close', left);
      resolve();
    };
    // The resuming client left too: it may resume again, from the last id it got.
    const left = () => {
      stop();
      finish();
    };
    res.on('close', left);
    const stop = stream.follow(
      afterId,
      (frames) => res.write(frames),
      () => {
        res.end();
        finish();
      },
    );
  });
}

/** The id after which the client wants the frames: `Last-Event-ID`, 0 (the whole stream) without one. */
function lastEventId(headers: IncomingHttpHeaders): number {
  const value = headers['last-event-id'];
  if (value === undefined || value === '') return 0;
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value.trim())) {
    throw errors.invalidRequest('Last-Event-ID must be the id of an event of the stream (a whole number).', 'Last-Event-ID');
  }
  return Number(value.trim());
}
