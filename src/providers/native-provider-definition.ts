import type { ProviderConfig } from '../config/schema.ts';
import type { UpstreamClient } from '../upstream/http-client.ts';
import type { ProviderAdapter } from './types.ts';

/**
 * Providers whose APIs are not OpenAI-compatible (one folder each). A definition decides from the
 * environment and its config entry whether it is enabled, and builds its adapter.
 */
export interface NativeProviderDefinition {
  name: string;
  /** What to set to enable it, for the 404 hint (e.g. "ANTHROPIC_API_KEY"). */
  enableHint: string;
  /** Environment variables it reads credentials from: the redactor removes their values from upstream text. */
  secretEnv: readonly string[];
  /**
   * `name`: the config entry's, for another instance of the provider (`type: azure` under a name
   * of its own); the definition's name otherwise.
   */
  create(
    env: NodeJS.ProcessEnv,
    fromFile: ProviderConfig | undefined,
    client: UpstreamClient,
    name?: string,
  ): ProviderAdapter | undefined;
}
