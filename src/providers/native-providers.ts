import { anthropicProvider } from './anthropic/index.ts';
import { azureProvider } from './azure/index.ts';
import { bedrockProvider } from './bedrock/index.ts';
import { googleProvider } from './google/index.ts';
import { vertexProvider } from './vertex/index.ts';
import type { NativeProviderDefinition } from './native-provider-definition.ts';

/** Providers whose APIs are not OpenAI-compatible (one folder each). */
export const nativeProviders: NativeProviderDefinition[] = [
  bedrockProvider,
  anthropicProvider,
  googleProvider,
  azureProvider,
  vertexProvider,
];
