import { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { CallContext, MessagesRelay, ProviderAdapter, ResponsesRelay } from '../types.ts';
import type { KeyPool } from './key-pool.ts';

/**
 * One adapter over a provider's key pool: each call takes a key from the pool and goes out through
 * that key's own adapter (the same provider built with that key). A 429, 401 or 403 at the door is
 * the key's: the pool sets it aside and the call is tried with another key, before routing sees
 * anything; when no key is left the last refusal (or the pool's own) is the call's failure.
 */
export function pooledAdapter<A extends ProviderAdapter>(pool: KeyPool, byLabel: ReadonlyMap<string, A>): A {
  const first = [...byLabel.values()][0];

  /** `call` with a key, and another on the key's refusal; `label`: the key that answered. */
  async function withKey<T>(
    ctx: CallContext,
    call: (adapter: A, ctx: CallContext) => Promise<T>,
  ): Promise<{ value: T; label: string }> {
    const tried = new Set<string>();
    let last: GatewayError | undefined;
    for (;;) {
      const choice = pool.take(ctx.affinity, tried);
      if (!choice.key) throw last ?? pool.unavailable(choice);
      const label = choice.key.label;
      tried.add(label);
      ctx.onProviderKey?.(pool.provider, label);
      const onResponse: CallContext['onResponse'] = (headers) => {
        pool.learn(label, headers);
        ctx.onResponse?.(headers);
      };
      try {
        return { value: await call(byLabel.get(label) as A, { ...ctx, onResponse }), label };
      } catch (err) {
        if (!(err instanceof GatewayError) || ctx.signal.aborted || !pool.refused(label, err)) throw err;
        last = err;
      }
    }
  }

  /** The events' usage, charged to the key the call went out with (its configured tokens a minute). */
  const chargeEvents = (label: string, events: readonly CanonicalEvent[]) => {
    let tokens = 0;
    for (const e of events) if (e.type === 'usage') tokens = e.usage.inputTokens + e.usage.outputTokens;
    pool.charge(label, tokens);
  };
  const valueOf = async <T>(keyed: Promise<{ value: T }>): Promise<T> => (await keyed).value;

  const adapter: ProviderAdapter = {
    name: first.name,
    listModels: () => first.listModels(),
    reportsInputFirst: first.reportsInputFirst,
    async stream(request, model, ctx) {
      const { value, label } = await withKey(ctx, (a, c) => a.stream(request, model, c));
      return (async function* () {
        let usage: CanonicalEvent[] = [];
        try {
          for await (const batch of value) {
            if (batch.some((e) => e.type === 'usage')) usage = batch;
            yield batch;
          }
        } finally {
          chargeEvents(label, usage);
        }
      })();
    },
    async complete(request, model, ctx) {
      const { value, label } = await withKey(ctx, (a, c) => a.complete(request, model, c));
      chargeEvents(label, value);
      return value;
    },
  };
  if (first.countTokens)
    adapter.countTokens = (request, model, ctx) => valueOf(withKey(ctx, (a, c) => a.countTokens!(request, model, c)));
  if (first.embed) {
    adapter.embed = async (request, model, ctx) => {
      const { value, label } = await withKey(ctx, (a, c) => a.embed!(request, model, c));
      pool.charge(label, value.inputTokens ?? 0);
      return value;
    };
  }
  if (first.responses) {
    const relay = (a: A) => a.responses as ResponsesRelay;
    adapter.responses = {
      stream: (body, model, ctx) => valueOf(withKey(ctx, (a, c) => relay(a).stream(body, model, c))),
      complete: (body, model, ctx) => valueOf(withKey(ctx, (a, c) => relay(a).complete(body, model, c))),
    };
  }
  if (first.messages) {
    const relay = (a: A) => a.messages as MessagesRelay;
    adapter.messages = {
      stream: (body, model, ctx) => valueOf(withKey(ctx, (a, c) => relay(a).stream(body, model, c))),
      async complete(body, model, ctx) {
        const { value, label } = await withKey(ctx, (a, c) => relay(a).complete(body, model, c));
        chargeEvents(label, value.events);
        return value;
      },
      countTokens: (body, model, ctx) => valueOf(withKey(ctx, (a, c) => relay(a).countTokens(body, model, c))),
    };
  }
  // The provider's other parts (an upstream's own model list) are the first key's.
  return { ...first, ...adapter };
}
