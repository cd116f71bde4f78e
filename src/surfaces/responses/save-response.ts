import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';
import type { OutputItem, ResponseIdentity } from './encode-response.ts';
import type { ResponsesInputItem } from './request-schema.ts';
import type { RunResponsesOptions } from './run-options.ts';
import { itemsToMessages } from './to-canonical.ts';

/** Keeps the conversation (history, this input, this output) for previous_response_id. */
export function saveResponse(
  run: RunScope,
  options: RunResponsesOptions,
  identity: ResponseIdentity,
  chat: CanonicalRequest,
  response: Record<string, unknown>,
): void {
  if (!options.store) return;
  // The instructions message (if any) is per-response and is not part of the conversation.
  const turn = chat.messages.slice(identity.request.instructions ? 1 : 0);
  // sluice's MCP calls are its own business: the conversation keeps the model's answer.
  const output = itemsToMessages((response.output as OutputItem[]).filter(isModelItem) as ResponsesInputItem[]);
  options.store
    .save({ id: identity.id, createdAt: identity.createdAt, model: identity.model, conversation: [...turn, ...output], response })
    .catch((err: Error) => run.ctx.accounting.log(`responses store: could not save ${identity.id}: ${err.message}`));
}

/** A relayed response is kept for GET only; its continuation is the upstream's business. */
export function saveRelayedResponse(run: RunScope, options: RunResponsesOptions, response: Record<string, unknown>): void {
  if (!options.store || typeof response.id !== 'string') return;
  options.store
    .save({
      id: response.id,
      createdAt: Number(response.created_at ?? 0),
      model: String(response.model ?? ''),
      conversation: [],
      response,
    })
    .catch((err: Error) => run.ctx.accounting.log(`responses store: could not save ${String(response.id)}: ${err.message}`));
}

function isModelItem(item: OutputItem): boolean {
  return item.type !== 'mcp_call' && item.type !== 'mcp_list_tools';
}
