/** The admin API's projects, keys and endpoints, as the console reads them (snake_case, as sent). */
export interface Budgets {
  daily_usd: number | null;
  monthly_usd: number | null;
}

export interface Project {
  id: string;
  name: string;
  tier: string | null;
  budgets: Budgets;
  models: string[] | null;
}

export interface Key {
  id: string;
  prefix: string;
  name: string | null;
  project: string;
  tier: string | null;
  models: string[] | null;
  admin: boolean;
  status: 'active' | 'disabled' | 'revoked' | 'expired' | 'deleted';
  budgets: Budgets;
  last_used_at: string | null;
  expires_at: string | null;
}

export interface Endpoint {
  project: string;
  name: string;
  model: string;
  stream_profile: string | null;
  usage: string | null;
  error_style: string | null;
  vendor_events: string | null;
  /** Its opt-in to the response cache; null: none of its own. */
  cache: { ttl_s: number; max_bytes: number } | null;
  base_path: string;
}

/** A created or rotated key's answer: the key's fields and, this once, its secret. */
export interface IssuedKey {
  key: string;
  name: string | null;
  prefix: string;
}

/** What the keys page gives each of its sections. */
export interface PageActions {
  /** Runs a change, then reads everything again; a refusal shows at the top of the page. */
  act: (action: () => Promise<unknown>) => void;
  /** Reads everything again (after an edit form saved). */
  refresh: () => void;
  /** Shows a new secret once, as creation and rotation give it. */
  showSecret: (what: string, key: string) => void;
}
