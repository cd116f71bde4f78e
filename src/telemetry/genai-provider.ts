/** sluice's provider names where the GenAI semantic conventions have a well-known value of their own. */
const PROVIDER_NAMES: Record<string, string> = { bedrock: 'aws.bedrock', google: 'gcp.gemini' };

/** `gen_ai.provider.name` for one of sluice's providers (its own name where the conventions have none). */
export function providerName(provider: string): string {
  return PROVIDER_NAMES[provider] ?? provider;
}
