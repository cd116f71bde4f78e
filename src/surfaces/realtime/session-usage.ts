import { normalizeTokenCounts, type Usage } from '../../protocol/canonical/usage.ts';

/** A session's usage so far: its responses' summed, as the pricing registry reads a usage. */
export interface SessionUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  audioInputTokens: number;
  audioOutputTokens: number;
  /** The `response.done` events counted. */
  responses: number;
}

export const NO_SESSION_USAGE: SessionUsage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  audioInputTokens: 0,
  audioOutputTokens: 0,
  responses: 0,
});

/**
 * The usage of a server event if it is a `response.done`, else undefined. Only a frame whose bytes
 * hold `response.done` is parsed: the audio deltas, most of a session's bytes, are base64 (which
 * has no `.`) and are never parsed. The counts go through normalizeTokenCounts (a count that is
 * not one reads 0).
 */
export function responseDoneUsage(frame: Buffer): Usage | undefined {
  const event = eventOfType(frame, 'response.done');
  if (!event) return undefined;
  const usage = isObject(event.response) && isObject(event.response.usage) ? event.response.usage : {};
  const input = isObject(usage.input_token_details) ? usage.input_token_details : {};
  const output = isObject(usage.output_token_details) ? usage.output_token_details : {};
  const { counts } = normalizeTokenCounts({
    input: usage.input_tokens,
    output: usage.output_tokens,
    cached: input.cached_tokens,
    audioIn: input.audio_tokens,
    audioOut: output.audio_tokens,
  });
  return {
    inputTokens: counts.input ?? 0,
    outputTokens: counts.output ?? 0,
    cachedInputTokens: counts.cached ?? 0,
    audioInputTokens: counts.audioIn ?? 0,
    audioOutputTokens: counts.audioOut ?? 0,
    source: 'provider',
  };
}

/** The session's usage with one more response's. */
export function addResponse(session: SessionUsage, usage: Usage): SessionUsage {
  return {
    inputTokens: session.inputTokens + usage.inputTokens,
    outputTokens: session.outputTokens + usage.outputTokens,
    cachedInputTokens: session.cachedInputTokens + (usage.cachedInputTokens ?? 0),
    audioInputTokens: session.audioInputTokens + (usage.audioInputTokens ?? 0),
    audioOutputTokens: session.audioOutputTokens + (usage.audioOutputTokens ?? 0),
    responses: session.responses + 1,
  };
}

/**
 * The client event's `event_id` if it is a `response.create` (null when it has none), else
 * undefined: what a session whose budget is spent refuses instead of forwarding.
 */
export function responseCreateId(frame: Buffer): string | null | undefined {
  const event = eventOfType(frame, 'response.create');
  if (!event) return undefined;
  return typeof event.event_id === 'string' ? event.event_id : null;
}

/** The frame's event if its `type` is `type`; parsed only when its bytes hold the name at all. */
function eventOfType(frame: Buffer, type: string): Record<string, unknown> | undefined {
  if (frame.indexOf(type) === -1) return undefined;
  let event: unknown;
  try {
    event = JSON.parse(frame.toString('utf8'));
  } catch {
    return undefined;
  }
  return isObject(event) && event.type === type ? event : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
