import type { Config } from '../config/schema.ts';
import type { StreamSession } from '../protocol/sse/stream-session.ts';
import type { ProviderRegistry } from '../providers/registry.ts';

/** What the routes share: built once at startup, no module-level state. */
export interface GatewayContext {
  config: Config;
  registry: ProviderRegistry;
  sessions: Set<StreamSession>;
  startedAt: number;
}
