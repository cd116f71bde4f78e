import type { Admission } from '../../admission/admission.ts';
import { errors } from '../../errors/catalog.ts';
import { type TierPolicy, tierDisplayName } from '../limits/tier-policy.ts';

type TierTimes = Pick<Admission, 'deadline' | 'idleTimeoutMs' | 'onDisconnect'>;

/** Shared by every request without a tier: spread into its admission, never written. */
const NO_TIMES: TierTimes = Object.freeze({});

/** The tier's deadline (with its error, naming the tier), idle timeout and disconnect policy, where it sets them. */
export function tierTimes(tier: TierPolicy | undefined): TierTimes {
  if (!tier) return NO_TIMES;
  const times: TierTimes = {};
  if (tier.deadlineMs !== undefined) {
    const seconds = tier.deadlineMs / 1000;
    const name = tierDisplayName(tier.name);
    times.deadline = { ms: tier.deadlineMs, error: () => errors.tierDeadline(name, seconds) };
  }
  if (tier.idleTimeoutMs !== undefined) times.idleTimeoutMs = tier.idleTimeoutMs;
  if (tier.onDisconnect !== undefined) times.onDisconnect = tier.onDisconnect;
  return times;
}
