/**
 * The health of each route target (`provider/model`), as this instance saw it: a circuit breaker
 * over consecutive failures, a cooldown after a 429 that said how long to wait, and an EWMA of the
 * time to first token used to pick among weighted targets. In memory, per instance (README
 * "Routes and fallback"): each instance learns from its own traffic.
 */
export type BreakerState = 'closed' | 'open' | 'half-open';

export interface HealthSettings {
  /** Consecutive failures that open the breaker. */
  breakerFailures: number;
  /** How long an open breaker skips its target before one probe is let through. */
  breakerOpenMs: number;
  /** Weight of the newest TTFT in the average (0..1). */
  ewmaAlpha?: number;
  now?: () => number;
}

/** How many recent failures a target keeps for GET /healthz/providers. */
const RECENT = 5;

/**
 * How many targets are tracked: any `provider/model` a client names is a target, so the oldest
 * tracked one is forgotten past this (it starts again as healthy, which is where it would be
 * after a quiet while anyway).
 */
const MAX_TARGETS = 1024;

interface TargetState {
  consecutiveFailures: number;
  openedAt: number | null;
  /** When the half-open probe was let through (null: none in flight). */
  probeAt: number | null;
  ttftEwmaMs: number | null;
  cooldownUntil: number | null;
  recent: { at: number; code: string }[];
}

export interface TargetHealthView {
  target: string;
  breaker: BreakerState;
  consecutive_failures: number;
  ttft_ewma_ms: number | null;
  cooldown_until: string | null;
  recent_failures: { at: string; code: string }[];
}

export class HealthBook {
  private readonly targets = new Map<string, TargetState>();
  private settings: Required<HealthSettings>;

  constructor(settings: HealthSettings) {
    this.settings = { ewmaAlpha: 0.3, now: Date.now, ...settings };
  }

  /** A reloaded config's thresholds; each target keeps what it has seen (an open breaker stays open). */
  tune(settings: Pick<HealthSettings, 'breakerFailures' | 'breakerOpenMs'>): void {
    this.settings = { ...this.settings, ...settings };
  }

  private state(key: string): TargetState {
    let s = this.targets.get(key);
    if (!s) {
      if (this.targets.size >= MAX_TARGETS) this.targets.delete(this.targets.keys().next().value as string);
      s = { consecutiveFailures: 0, openedAt: null, probeAt: null, ttftEwmaMs: null, cooldownUntil: null, recent: [] };
      this.targets.set(key, s);
    }
    return s;
  }

  breaker(key: string): BreakerState {
    const s = this.targets.get(key);
    if (!s || s.openedAt === null) return 'closed';
    return this.settings.now() - s.openedAt >= this.settings.breakerOpenMs ? 'half-open' : 'open';
  }

  /**
   * Whether a request may go to the target now: not cooling down, and its breaker closed, or
   * half-open with no probe in flight (a probe that never reported is forgotten after the open
   * time, so a cancelled request cannot hold the target shut).
   */
  available(key: string): boolean {
    const s = this.targets.get(key);
    if (!s) return true;
    const now = this.settings.now();
    if (s.cooldownUntil !== null && now < s.cooldownUntil) return false;
    const breaker = this.breaker(key);
    if (breaker === 'open') return false;
    if (breaker === 'half-open') return s.probeAt === null || now - s.probeAt >= this.settings.breakerOpenMs;
    return true;
  }

  /** An attempt starts: through a half-open breaker it is the one probe. */
  begin(key: string): void {
    if (this.breaker(key) === 'half-open') this.state(key).probeAt = this.settings.now();
  }

  /** The target gave its first output after `ttftMs`: the breaker closes, the average moves. */
  succeeded(key: string, ttftMs: number): void {
    const s = this.state(key);
    s.consecutiveFailures = 0;
    s.openedAt = null;
    s.probeAt = null;
    const a = this.settings.ewmaAlpha;
    s.ttftEwmaMs = s.ttftEwmaMs === null ? ttftMs : a * ttftMs + (1 - a) * s.ttftEwmaMs;
  }

  /**
   * The target failed in a way another target might not (the fallback policy said so). A failed
   * probe opens the breaker again for a whole open time.
   */
  failed(key: string, code: string): void {
    const s = this.state(key);
    const now = this.settings.now();
    s.consecutiveFailures++;
    s.recent.push({ at: now, code });
    if (s.recent.length > RECENT) s.recent.shift();
    if (s.probeAt !== null || s.consecutiveFailures >= this.settings.breakerFailures) s.openedAt = now;
    s.probeAt = null;
  }

  /** The target said how long to wait (429 with Retry-After): skipped until then. */
  coolDown(key: string, ms: number): void {
    const s = this.state(key);
    const until = this.settings.now() + ms;
    s.cooldownUntil = Math.max(s.cooldownUntil ?? 0, until);
  }

  /** The latency score: lower is better; an unmeasured target scores 0 so that it gets tried. */
  score(key: string): number {
    return this.targets.get(key)?.ttftEwmaMs ?? 0;
  }

  /** The `known` targets (a route's, untried yet) and every target this instance has tried, for GET /healthz/providers. */
  view(known: readonly string[] = []): TargetHealthView[] {
    const now = this.settings.now();
    for (const key of known) this.state(key);
    return [...this.targets].map(([target, s]) => ({
      target,
      breaker: this.breaker(target),
      consecutive_failures: s.consecutiveFailures,
      ttft_ewma_ms: s.ttftEwmaMs === null ? null : Math.round(s.ttftEwmaMs),
      cooldown_until: s.cooldownUntil !== null && s.cooldownUntil > now ? new Date(s.cooldownUntil).toISOString() : null,
      recent_failures: s.recent.map((f) => ({ at: new Date(f.at).toISOString(), code: f.code })),
    }));
  }
}
