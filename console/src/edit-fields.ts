import { STREAM_PROFILE_NAMES } from '../../src/config/stream-profile-names.ts';
import type { Endpoint, Key, Project } from './admin-types.ts';
import type { Draft, FieldSpec } from './EditForm.tsx';

/** Empty text clears the field (null); anything else is sent as typed, for the API to check and name. */
const text = (v: string): string | null => (v.trim() === '' ? null : v.trim());
const amount = (v: string): number | null => (v.trim() === '' ? null : Number(v));
const list = (v: string): string[] | null => {
  const names = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return names.length === 0 ? null : names;
};
/** A datetime-local input is the browser's local time; the API takes ISO 8601 with an offset. */
const instant = (v: string): string | null => (v === '' ? null : new Date(v).toISOString());

/** An ISO time as a datetime-local input's value, in the browser's local time. */
function localInput(iso: string | null): string {
  if (iso === null) return '';
  const ms = new Date(iso).getTime();
  return new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

const amountText = (n: number | null): string => (n === null ? '' : String(n));

const BUDGETS: readonly FieldSpec[] = [
  { param: 'budgets.daily_usd', label: 'Daily budget, USD (empty: none)', type: 'number', parse: amount },
  { param: 'budgets.monthly_usd', label: 'Monthly budget, USD (empty: none)', type: 'number', parse: amount },
];
const MODELS: FieldSpec = { param: 'models', label: 'Allowed models, comma-separated (empty: any)', parse: list };

export const KEY_FIELDS: readonly FieldSpec[] = [
  { param: 'name', label: 'Name', parse: text },
  { param: 'tier', label: 'Tier (empty: the project’s)', parse: text },
  MODELS,
  ...BUDGETS,
  { param: 'expires_at', label: 'Expires (empty: never)', type: 'datetime-local', parse: instant },
];

export function keyDraft(k: Key): Draft {
  return {
    name: k.name ?? '',
    tier: k.tier ?? '',
    models: k.models?.join(', ') ?? '',
    'budgets.daily_usd': amountText(k.budgets.daily_usd),
    'budgets.monthly_usd': amountText(k.budgets.monthly_usd),
    expires_at: localInput(k.expires_at),
  };
}

export const PROJECT_FIELDS: readonly FieldSpec[] = [
  { param: 'name', label: 'Name', required: true, parse: (v) => v.trim() },
  { param: 'tier', label: 'Tier (empty: the default tier)', parse: text },
  { ...MODELS, label: 'Models its keys may use, comma-separated (empty: any)' },
  ...BUDGETS,
];

export function projectDraft(p: Project): Draft {
  return {
    name: p.name,
    tier: p.tier ?? '',
    models: p.models?.join(', ') ?? '',
    'budgets.daily_usd': amountText(p.budgets.daily_usd),
    'budgets.monthly_usd': amountText(p.budgets.monthly_usd),
  };
}

/** A stream setting's choices; none: the config's `stream:` value. */
const choices = (values: readonly string[]) => [
  { value: '', text: 'the config’s' },
  ...values.map((value) => ({ value, text: value })),
];

/** A number as typed, else the text itself (for the API to name). */
const numberOrText = (v: string): number | string => (v !== '' && Number.isFinite(Number(v)) ? Number(v) : v);

/**
 * An endpoint's response cache as one field, `seconds` or `seconds/max bytes` (the API replaces
 * the setting whole, so both travel together); empty: off.
 */
const cacheSetting = (v: string): Record<string, unknown> | null => {
  if (v.trim() === '') return null;
  const [ttl, maxBytes] = v.split('/').map((s) => s.trim());
  return maxBytes === undefined ? { ttl_s: numberOrText(ttl) } : { ttl_s: numberOrText(ttl), max_bytes: numberOrText(maxBytes) };
};

const cacheText = (cache: Endpoint['cache']): string => (cache ? `${cache.ttl_s}/${cache.max_bytes}` : '');

export const ENDPOINT_FIELDS: readonly FieldSpec[] = [
  { param: 'model', label: 'Model (an alias or provider/model)', required: true, parse: (v) => v.trim() },
  { param: 'stream_profile', label: 'Stream profile', type: 'select', options: choices(STREAM_PROFILE_NAMES), parse: text },
  { param: 'usage', label: 'Usage chunk', type: 'select', options: choices(['opt_in', 'always']), parse: text },
  { param: 'error_style', label: 'Error style', type: 'select', options: choices(['data', 'event']), parse: text },
  { param: 'vendor_events', label: 'Vendor events', type: 'select', options: choices(['drop', 'passthrough']), parse: text },
  {
    param: 'cache',
    label: 'Response cache: seconds, or seconds/max bytes (empty: off)',
    parse: cacheSetting,
  },
];

export function endpointDraft(e: Endpoint): Draft {
  return {
    model: e.model,
    stream_profile: e.stream_profile ?? '',
    usage: e.usage ?? '',
    error_style: e.error_style ?? '',
    vendor_events: e.vendor_events ?? '',
    cache: cacheText(e.cache),
  };
}
