/** The names of the stream profiles (protocol/stream-profiles.ts defines each): here so the config schema can name them. */
export const STREAM_PROFILE_NAMES = [
  'openai',
  'chat-streaming-usage',
  'chat-streaming-full',
  'chat-streaming-always-usage',
  'accounting',
  'responses-streaming',
] as const;

export type StreamProfileName = (typeof STREAM_PROFILE_NAMES)[number];
