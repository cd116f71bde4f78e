import type { IncomingHttpHeaders } from 'node:http';
import { cacheKey } from '../cache/cache-key.ts';
import { cacheModeOf, cachePolicyOf } from '../cache/cache-policy.ts';
import { BYPASS, type CacheSlot, NOT_CACHED } from '../cache/response-cache.ts';
import type { Caller } from '../admission/admission.ts';
import type { Candidate } from '../routing/plan.ts';
import type { PipelineContext } from './context.ts';
import type { PreparedRequest } from './model-operation.ts';

/** What the lookup reads of the request, once it is prepared. */
export interface CacheQuestion {
  caller: Caller;
  surface: string;
  /** The model the client named. */
  model: string;
  candidates: readonly Candidate[];
  prepared: PreparedRequest;
  headers: IncomingHttpHeaders;
}

/**
 * The lifecycle's cache step, between prepare and admit (docs/operations/response-cache.md): a
 * request its route, endpoint or tier opted in is answered from the cache when it can be (or
 * waits for an identical one in flight), else goes upstream and may keep its answer. The admission is told
 * whether it is a hit (which costs nothing); once admitted, the response says which
 * (`x-sluice-cache: hit|miss|bypass`, set by the lifecycle).
 */
export async function lookUpAnswer(question: CacheQuestion, ctx: PipelineContext): Promise<CacheSlot> {
  const cache = ctx.responseCache;
  const policy = cachePolicyOf(ctx.config, question.caller.tier, question.model, ctx.endpointCache);
  if (!cache || !policy) return NOT_CACHED;
  const mode = cacheModeOf(question.headers);
  if (!question.prepared.cacheable || mode === 'bypass') return BYPASS;
  return cache.lookup(keyOf(question), policy, mode);
}

/**
 * Whether the cache would answer this request now, from a kept answer or an identical request in
 * flight: a dry run's question (docs/api/dry-run.md). `off`: nothing opted the request in;
 * `bypass`: a relayed answer, or the client asked not to use the cache; `miss` on a refresh too.
 * Reads nothing but the cache, counts nothing, waits for nothing.
 */
export async function cacheVerdict(question: CacheQuestion, ctx: PipelineContext): Promise<'off' | 'bypass' | 'hit' | 'miss'> {
  const cache = ctx.responseCache;
  const policy = cachePolicyOf(ctx.config, question.caller.tier, question.model, ctx.endpointCache);
  if (!cache || !policy) return 'off';
  const mode = cacheModeOf(question.headers);
  if (!question.prepared.cacheable || mode === 'bypass') return 'bypass';
  return mode === 'use' && (await cache.wouldHit(keyOf(question))) ? 'hit' : 'miss';
}

/** The cache key of a prepared request (cache-key.ts). */
function keyOf(question: Pick<CacheQuestion, 'caller' | 'surface' | 'model' | 'candidates' | 'prepared'>): string {
  return cacheKey({
    projectId: question.caller.projectId,
    surface: question.surface,
    requestedModel: question.model,
    target: question.candidates[0].key,
    request: question.prepared.request,
  });
}
