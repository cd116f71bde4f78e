import type { Config } from '../config/schema.ts';
import type { StreamProfileName } from '../config/stream-profile-names.ts';
import { resolveStreamProfile, type StreamProfile } from '../protocol/stream-profiles.ts';

/** Stream settings a project's endpoint sets in place of the config's `stream` section. */
export type StreamOverrides = Partial<Pick<Config['stream'], 'profile' | 'usage' | 'error_style' | 'vendor_events'>>;

/** What chooses a request's stream profile besides the config: its X-Sluice-Profile header, its endpoint. */
export interface StreamChoice {
  header?: StreamProfileName;
  endpoint?: StreamOverrides;
}

/**
 * The profile a request streams with: the one its X-Sluice-Profile header names, else its
 * endpoint's, else the config's; then `usage`, `error_style` and `vendor_events` where set apart
 * from the profile (the endpoint's, else the config's) win over the profile's own.
 */
export function streamProfileFor(config: Config['stream'], choice: StreamChoice): StreamProfile {
  const name = choice.header ?? choice.endpoint?.profile ?? config.profile;
  return resolveStreamProfile(name, choice.endpoint ?? {}, config);
}
