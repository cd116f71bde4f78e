export { readStream, readStreamText, type StreamHandlers } from './read-stream.ts';
export { SluiceProtocolError, SluiceStreamError, type UpstreamDetail } from './errors.ts';
export type { StreamFrame, StreamMessage, StreamSurface, StreamToolCall, StreamUsage } from './types.ts';
