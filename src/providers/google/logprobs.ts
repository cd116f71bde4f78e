import type { TokenLogprob } from '../../protocol/canonical/events.ts';
import type { GeminiLogprobsCandidate, GeminiLogprobsResult } from './payload.ts';

function entry(c: GeminiLogprobsCandidate): { token: string; logprob: number; bytes: number[] } {
  const token = c.token ?? '';
  return { token, logprob: c.logProbability ?? 0, bytes: [...Buffer.from(token, 'utf8')] };
}

/**
 * `logprobsResult` (requested with responseLogprobs / logprobs) in OpenAI's shape: one entry per
 * decoding step of `chosenCandidates`, with the same step of `topCandidates` as its top list.
 */
export function convertGeminiLogprobs(result: GeminiLogprobsResult): TokenLogprob[] | undefined {
  const chosen = result.chosenCandidates ?? [];
  if (chosen.length === 0) return undefined;
  return chosen.map((c, step) => ({
    ...entry(c),
    top_logprobs: (result.topCandidates?.[step]?.candidates ?? []).map(entry),
  }));
}
