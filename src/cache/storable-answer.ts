import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import { isOutputEvent } from '../protocol/canonical/events.ts';

/**
 * The events of an answer worth keeping, or undefined when it is not a complete, successful one:
 * an error among them, no finish, a choice with output but no finish (a stream cut short, a
 * budget's stop: those finishes are sluice's own and never reach the events), or a finish by the
 * output limit (`length`) unless `cacheLength`. A `fallback` event is left out: routing's switch
 * before the answer is not part of it, and a replay comes from the cache, not a target.
 */
export function storableAnswer(events: readonly CanonicalEvent[], cacheLength: boolean): CanonicalEvent[] | undefined {
  const withOutput = new Set<number>();
  const finished = new Set<number>();
  const kept: CanonicalEvent[] = [];
  for (const event of events) {
    if (event.type === 'error') return undefined;
    if (event.type === 'fallback') continue;
    if (event.type === 'finish') {
      if (event.reason === 'length' && !cacheLength) return undefined;
      finished.add(event.choice);
    } else if (isOutputEvent(event) && 'choice' in event && event.choice !== null) withOutput.add(event.choice);
    kept.push(event);
  }
  if (finished.size === 0) return undefined;
  for (const choice of withOutput) if (!finished.has(choice)) return undefined;
  return kept;
}
