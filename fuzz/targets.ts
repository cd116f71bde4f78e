import type { FuzzTarget } from './run-targets.ts';
import { responseDecoderTargets } from './response-decoders.ts';
import { sseFramerTargets } from './sse-framer.ts';
import { streamDecoderTargets } from './stream-decoders.ts';
import { surfaceEncoderTargets } from './surface-encoders.ts';

/** Every fuzz target: the SSE framer, each provider's stream and response decoder, each surface encoder. */
export const fuzzTargets: FuzzTarget[] = [
  ...sseFramerTargets,
  ...streamDecoderTargets,
  ...responseDecoderTargets,
  ...surfaceEncoderTargets,
];
