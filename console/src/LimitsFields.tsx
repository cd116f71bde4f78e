/** The optional tier and budgets of the create forms, as typed (empty: not set). */
interface LimitsDraft {
  tier: string;
  daily: string;
  monthly: string;
}
export const NO_LIMITS: LimitsDraft = { tier: '', daily: '', monthly: '' };

/** Only what was filled in; the admin API checks the values and names a bad one in its 400. */
export function limitsBody(d: LimitsDraft): Record<string, unknown> {
  const budgets = {
    ...(d.daily && { daily_usd: Number(d.daily) }),
    ...(d.monthly && { monthly_usd: Number(d.monthly) }),
  };
  return { ...(d.tier && { tier: d.tier }), ...(Object.keys(budgets).length > 0 && { budgets }) };
}

/** Tier and budget inputs for a create form, labelled with whose they are. */
export function LimitsFields<T extends LimitsDraft>({ draft, set, whose }: { draft: T; set: (d: T) => void; whose: string }) {
  return (
    <>
      <label>
        {whose} tier (optional)
        <input value={draft.tier} onChange={(e) => set({ ...draft, tier: e.target.value })} />
      </label>
      <label>
        {whose} daily budget, USD (optional)
        <input type="number" min="0" step="any" value={draft.daily} onChange={(e) => set({ ...draft, daily: e.target.value })} />
      </label>
      <label>
        {whose} monthly budget, USD (optional)
        <input
          type="number"
          min="0"
          step="any"
          value={draft.monthly}
          onChange={(e) => set({ ...draft, monthly: e.target.value })}
        />
      </label>
    </>
  );
}
