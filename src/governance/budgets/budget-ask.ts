import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { outputAllowance, type TokenPrices } from './request-estimate.ts';

/** What a request asks of its budget windows, in nano-dollars. */
export interface BudgetAsk {
  /** The prompt's estimated cost. */
  inputNanos: number;
  outputNanosPerToken: number;
  /** The answers generated at once (`n`): every output limit applies to each (0: no output, embeddings). */
  choices: number;
  /** The reservation asked for: the prompt and every choice's output allowance. */
  want: number;
  /** The least the request can be answered for: below it, it is refused before it is sent. */
  min: number;
  /** How much more a stream asks for each time it nears its reservation. */
  stepNanos: number;
  /** The request's own output limit (per choice), if it set one. */
  ownMax: number | undefined;
}

/**
 * The answers a request has generated, each up to its output limit: `n`, or `best_of` where an
 * OpenAI-compatible server takes it (vLLM, the legacy completions API: that many are generated
 * and the best `n` returned), whichever is more. Nothing else a request carries multiplies its
 * output: the Responses and Messages APIs generate one answer.
 */
export function outputChoices(request: CanonicalRequest): number {
  const bestOf = request.extra?.best_of;
  return Math.max(1, request.n ?? 1, typeof bestOf === 'number' && Number.isSafeInteger(bestOf) ? bestOf : 1);
}

/**
 * The reservation of a request whose prompt is estimated at `promptTokens`: the prompt at the
 * input price and `choices` times its output allowance (its own limit, within `reserveOutput`;
 * an embeddings request has no output: 0 choices). Its minimum is its prompt and one output token
 * per choice: a budget with less left refuses it up front (429 insufficient_quota) rather than let
 * it pay for a prompt whose answer cannot hold a token. A spent budget refuses everything, a free
 * model included.
 */
export function budgetAsk(
  request: CanonicalRequest,
  promptTokens: number,
  prices: TokenPrices,
  reserveOutput: number,
  choices: number = outputChoices(request),
): BudgetAsk {
  const inputNanos = promptTokens * prices.inputNanos;
  const outputNanos = choices * outputAllowance(request, reserveOutput) * prices.outputNanos;
  const ownMax = request.max_completion_tokens ?? request.max_tokens;
  return {
    inputNanos,
    outputNanosPerToken: prices.outputNanos,
    choices,
    want: Math.ceil(inputNanos + outputNanos),
    min: Math.max(1, Math.ceil(inputNanos + choices * prices.outputNanos)),
    stepNanos: Math.max(1, Math.ceil(outputNanos)),
    ownMax: typeof ownMax === 'number' && ownMax > 0 ? ownMax : undefined,
  };
}

/**
 * The output limit per choice that a non-streamed request's grant pays for, when that is less
 * than it asked (or it asked no limit): its answer cannot be cut, so all its choices together must
 * fit. A grant is at least the minimum, so each choice gets at least one token. Free models, and
 * requests without output, are not capped.
 */
export function outputCap(ask: BudgetAsk, granted: number): number | undefined {
  if (ask.outputNanosPerToken <= 0 || ask.choices === 0) return undefined;
  // The epsilon keeps a grant of exactly n tokens from rounding down to n - 1.
  const affordable = Math.floor((granted - ask.inputNanos) / ask.outputNanosPerToken + 1e-9);
  const perChoice = Math.floor(affordable / ask.choices);
  return ask.ownMax !== undefined && ask.ownMax <= perChoice ? undefined : perChoice;
}

/**
 * The ask with the price of the request's media units added to what it must pay up front (the
 * images it asks for, the characters it has spoken: known before it is sent), in its reservation
 * and its minimum.
 */
export function withUnits(ask: BudgetAsk, unitsNanos: number): BudgetAsk {
  if (unitsNanos <= 0) return ask;
  const fixed = Math.ceil(unitsNanos);
  return { ...ask, inputNanos: ask.inputNanos + unitsNanos, want: ask.want + fixed, min: ask.min + fixed };
}
