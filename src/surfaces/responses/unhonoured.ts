import { errors } from '../../errors/catalog.ts';
import type { ResponsesRequest } from './request-schema.ts';

/**
 * Responses parameters that are OpenAI services rather than model settings: a translated target
 * (any provider without a Responses API of its own) cannot honour them, and going on without them
 * would change the answer, so the client is told (a 400 naming the first) instead. Under the
 * provider's `drop_params: true` they are left out. A relayed upstream gets them as sent.
 */
export function unhonouredParams(request: ResponsesRequest): { param: string; why: string }[] {
  const out: { param: string; why: string }[] = [];
  const no = (param: string, why: string) => out.push({ param, why });
  if (request.background === true) no('background', 'sluice runs a response while the request waits (background: false)');
  if (request.conversation != null) {
    no('conversation', 'sluice keeps no Conversations; continue a response with previous_response_id');
  }
  if (request.prompt != null) no('prompt', 'a stored prompt template lives at OpenAI; send it as instructions and input');
  if (request.moderation != null) no('moderation', 'sluice runs no moderation model');
  if (request.context_management?.length) no('context_management', 'sluice does not compact a conversation');
  const cyber = request.access_programs?.cyber;
  if (cyber != null && cyber !== 'standard') no('access_programs.cyber', `the '${cyber}' access program is OpenAI's`);
  return out;
}

/** The 400 for the first parameter `provider` cannot honour, unless its config drops them. */
export function refuseUnhonoured(request: ResponsesRequest, provider: string, dropParams: boolean): void {
  const [first] = unhonouredParams(request);
  if (!first || dropParams) return;
  throw errors.invalidRequest(
    `${provider} cannot honour \`${first.param}\`: ${first.why}. Remove it, or set drop_params: true for this provider to have sluice drop it.`,
    first.param,
  );
}
