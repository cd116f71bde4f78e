import type { MessagesRelay, ProviderAdapter } from './types.ts';

/** The relay POST /v1/messages goes through for `model` of this provider, if it relays that model. */
export function messagesRelayOf(adapter: ProviderAdapter, model: string): MessagesRelay | undefined {
  return adapter.messages && (adapter.relaysMessages?.(model) ?? true) ? adapter.messages : undefined;
}
