import { createHash } from 'node:crypto';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';

/** What names one answer in the response cache: everything that can change it, and whose it is. */
export interface CacheKeyParts {
  /** The caller's project (null: the master key): an answer is never served to another project. */
  projectId: string | null;
  surface: string;
  /** The model the client named (a route, an alias, provider/model). */
  requestedModel: string;
  /** The target it resolved to first (`provider/model`). */
  target: string;
  /** The canonical request built for that target: messages or input, tools, response format, sampling, n, seed, ... */
  request: CanonicalRequest;
}

/**
 * Fields that cannot change the answer, left out of the key so that one cached answer serves a
 * streamed and a non-streamed request alike, whoever the end user is: how it is delivered
 * (`stream`, `stream_options`, which the chat surface keeps in `extra`), who asked (`user`), and
 * what the client files it under (`metadata`, tags: takeTags has removed those already).
 */
const DELIVERY_FIELDS = new Set(['stream', 'stream_options', 'user', 'metadata']);

/** The key of a request's answer: a SHA-256 of its parts, in a form where key order does not matter. */
export function cacheKey(parts: CacheKeyParts): string {
  const { user: _user, metadata: _metadata, extra, ...request } = parts.request;
  const kept = { ...request, extra: extra && withoutDelivery(extra) };
  const text = stableJson([parts.projectId, parts.surface, parts.requestedModel, parts.target, kept]);
  return createHash('sha256').update(text).digest('hex');
}

/** The extra fields that can change the answer; undefined when none is left (as when none came). */
function withoutDelivery(extra: Record<string, unknown>): Record<string, unknown> | undefined {
  const entries = Object.entries(extra).filter(([name]) => !DELIVERY_FIELDS.has(name));
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

/** JSON with every object's keys sorted and undefined members left out: equal values, equal text. */
export function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const members: string[] = [];
  for (const name of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[name];
    if (member !== undefined) members.push(`${JSON.stringify(name)}:${stableJson(member)}`);
  }
  return `{${members.join(',')}}`;
}
