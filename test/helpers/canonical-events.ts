import type { CanonicalEvent } from '../../src/protocol/canonical/events.ts';
import type { FinishReason } from '../../src/protocol/canonical/finish-reason.ts';

/** The canonical events the decoder tests expect, built the same way in every provider's tests. */
export const start = (upstreamId: string, upstreamModel: string): CanonicalEvent => ({ type: 'start', upstreamId, upstreamModel });
export const text = (t: string, choice = 0): CanonicalEvent => ({ type: 'text', choice, text: t });
export const reasoning = (t: string): CanonicalEvent => ({ type: 'reasoning', choice: 0, text: t });
/** A signature arrives as a reasoning event without text. */
export const signature = (s: string): CanonicalEvent => ({ type: 'reasoning', choice: 0, text: '', signature: s });
export const call = (index: number, id: string, name: string, choice = 0): CanonicalEvent => ({
  type: 'tool-call-start',
  choice,
  index,
  id,
  name,
});
export const args = (index: number, a: string, choice = 0): CanonicalEvent => ({ type: 'tool-call-delta', choice, index, arguments: a });
export const finish = (reason: FinishReason, rawReason: string, choice = 0): CanonicalEvent => ({ type: 'finish', choice, reason, rawReason });
