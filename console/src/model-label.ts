import type { RequestRecord } from './api.ts';

/** The provider/model that served the request; null when none did (refused before routing). */
export function servedModel(r: Pick<RequestRecord, 'provider' | 'model'>): string | null {
  return r.provider === '' ? null : `${r.provider}/${r.model}`;
}

/**
 * What the log's model column says: the model that served the request, or for a refused one the
 * model it asked for (never "/"); and a note when the two differ (a route, an alias).
 */
export function modelLabel(r: Pick<RequestRecord, 'provider' | 'model' | 'requested_model'>): { model: string; note?: string } {
  const served = servedModel(r);
  if (served === null) return { model: r.requested_model || '–', note: 'not sent upstream' };
  const asked = r.requested_model !== served && r.requested_model !== r.model ? `asked ${r.requested_model}` : undefined;
  return { model: served, note: asked };
}
