import type { StreamProfileName } from '../config/stream-profile-names.ts';

/**
 * The stream profiles: OpenAI's own behaviour (`openai`, the default) and one profile per
 * reference document (shared/reference/), each the set of choices where the documents disagree
 * with each other or with OpenAI's API. A client written against any of these gateways works
 * unchanged when its endpoint (or the config, or its request's X-Sluice-Profile) names the
 * profile of its document. docs/streams/profiles.md has the table.
 */

/** The choices of a chat-completions stream. */
export interface ChatStreamChoices {
  /** `chunks`: chat.completion.chunk frames alone; `accounting`: the accounting events around them. */
  frames: 'chunks' | 'accounting';
  /** The usage chunk: when the client asks (`stream_options.include_usage`), or always. */
  usage: 'opt_in' | 'always';
  /** Where the usage goes: a chunk of its own (`choices: []`), or the finish chunk. */
  usageChunk: 'own' | 'finish';
  /** `"usage":null` on the other chunks: when usage was asked for (OpenAI), on every chunk, or never. */
  nullUsage: 'requested' | 'every' | 'never';
  /** A tool-call delta's `content`: absent, or `null`. */
  toolCallContent: 'absent' | 'null';
  /** The error frame: `data: {"error":…}`, or a named `event: error`. */
  errorStyle: 'data' | 'event';
  /** The error frame's `type`: sluice's classification, or the upstream's own where it gave one. */
  errorType: 'sluice' | 'upstream';
  /** An upstream failure before any output: an HTTP error, or a 200 stream with the error frame. */
  upstreamFailure: 'http' | 'frame';
  /** An upstream's `x_*` events: dropped, or passed through. */
  vendorEvents: 'drop' | 'passthrough';
}

/** The choices of a Responses stream (built by sluice; a relayed one is the upstream's). */
export interface ResponsesStreamChoices {
  /** The `usage` of response.created and response.in_progress: `null`, or zeros. */
  createdUsage: 'null' | 'zeros';
  /** `call_id` on response.function_call_arguments.delta too (it is always on `.done`). */
  argumentsCallId: boolean;
  /** An `error` event before response.failed (OpenAI's; the openai SDK raises on it). */
  errorEvent: boolean;
}

export interface StreamProfile {
  chat: ChatStreamChoices;
  responses: ResponsesStreamChoices;
  /** The OpenAI-family routes are also served under `/api/v1` (the accounting reference's base path). */
  apiPrefix: boolean;
}

const OPENAI: StreamProfile = {
  chat: {
    frames: 'chunks',
    usage: 'opt_in',
    usageChunk: 'own',
    nullUsage: 'requested',
    toolCallContent: 'absent',
    errorStyle: 'data',
    errorType: 'sluice',
    upstreamFailure: 'http',
    vendorEvents: 'drop',
  },
  responses: { createdUsage: 'null', argumentsCallId: false, errorEvent: true },
  apiPrefix: false,
};

/** Each document's choices, where they differ from OpenAI's (the document named in each comment). */
export const STREAM_PROFILES: Readonly<Record<StreamProfileName, StreamProfile>> = {
  openai: OPENAI,
  // chat-streaming-usage.txt: `usage?` is absent from chunks, and its error frame's type is the
  // failure's own (`{"error":{"message":"upstream timeout","type":"stream_error"}}`).
  'chat-streaming-usage': { ...OPENAI, chat: { ...OPENAI.chat, nullUsage: 'never', errorType: 'upstream' } },
  // chat-streaming-full.txt: usage on "the final chunk (the one with finish_reason set)", null "in
  // all chunks" otherwise; `content` "Null when no text is generated (e.g., tool calls)";
  // mid-stream errors as `event: error`; vendor events inline.
  'chat-streaming-full': {
    ...OPENAI,
    chat: {
      ...OPENAI.chat,
      usageChunk: 'finish',
      nullUsage: 'every',
      toolCallContent: 'null',
      errorStyle: 'event',
      vendorEvents: 'passthrough',
    },
  },
  // chat-streaming-always-usage.txt: usage always, `stream_options` ignored; no usage field elsewhere.
  'chat-streaming-always-usage': { ...OPENAI, chat: { ...OPENAI.chat, usage: 'always', nullUsage: 'never' } },
  // accounting-events.txt: its named events; `error` "on upstream failure" ("Provider returned 502
  // Bad Gateway") in the stream; served under https://…/api/v1.
  accounting: {
    ...OPENAI,
    chat: { ...OPENAI.chat, frames: 'accounting', nullUsage: 'never', upstreamFailure: 'frame' },
    apiPrefix: true,
  },
  // responses-streaming.txt: response.created carries zero usage, the argument deltas name their
  // call_id, and a failure is response.failed alone.
  'responses-streaming': { ...OPENAI, responses: { createdUsage: 'zeros', argumentsCallId: true, errorEvent: false } },
};

/** Settings an operator sets apart from the profile, which win over the profile's (config `stream`, an endpoint). */
export interface StreamChoiceOverrides {
  usage?: ChatStreamChoices['usage'];
  error_style?: ChatStreamChoices['errorStyle'];
  vendor_events?: ChatStreamChoices['vendorEvents'];
}

/** The profile, with the settings given apart from it (the first that sets one wins). */
export function resolveStreamProfile(name: StreamProfileName, ...overrides: StreamChoiceOverrides[]): StreamProfile {
  const profile = STREAM_PROFILES[name];
  const pick = <K extends keyof StreamChoiceOverrides>(key: K) => overrides.find((o) => o[key] !== undefined)?.[key];
  const usage = pick('usage');
  const errorStyle = pick('error_style');
  const vendorEvents = pick('vendor_events');
  if (usage === undefined && errorStyle === undefined && vendorEvents === undefined) return profile;
  return {
    ...profile,
    chat: {
      ...profile.chat,
      usage: usage ?? profile.chat.usage,
      errorStyle: errorStyle ?? profile.chat.errorStyle,
      vendorEvents: vendorEvents ?? profile.chat.vendorEvents,
    },
  };
}
