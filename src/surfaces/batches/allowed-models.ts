import type { Caller } from '../../admission/admission.ts';
import { errors } from '../../errors/catalog.ts';

/**
 * A key with a model list may batch only those models, as it may call only them: each request
 * of the batch is checked (by the name it gives, or `provider/name`) before the batch goes upstream.
 */
export function refuseDisallowedBatchModels(caller: Caller, provider: string, models: Iterable<string>): void {
  const allowed = caller.allowedModels;
  if (!allowed) return;
  for (const model of models) {
    if (!allowed.includes(model) && !allowed.includes(`${provider}/${model}`)) throw errors.modelNotAllowed(model);
  }
}

/** The models an OpenAI batch input file names: each JSON line's `body.model` (a line without one names none). */
export function inputFileModels(jsonl: string): Set<string> {
  const models = new Set<string>();
  for (const line of jsonl.split('\n')) {
    if (!line.trim()) continue;
    try {
      const model = (JSON.parse(line) as { body?: { model?: unknown } } | null)?.body?.model;
      if (typeof model === 'string') models.add(model);
    } catch {
      // The upstream validates the file itself; a line that is not JSON names no model.
    }
  }
  return models;
}

/** The models a Message Batches create body names: each request's `params.model`. */
export function messageBatchModels(requests: readonly unknown[]): Set<string> {
  const models = new Set<string>();
  for (const request of requests) {
    const model = (request as { params?: { model?: unknown } } | null)?.params?.model;
    if (typeof model === 'string') models.add(model);
  }
  return models;
}
