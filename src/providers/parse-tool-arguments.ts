import { errors } from '../errors/catalog.ts';

/**
 * OpenAI clients send a tool call's arguments as a JSON string; Anthropic, Gemini and Bedrock
 * take them as an object. Empty arguments are `{}`; anything else that is not a JSON object is
 * the client's mistake, a 400 naming the field.
 */
export function parseToolArguments(args: string, provider: string, param: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    throw errors.invalidRequest(`Tool call arguments must be valid JSON to be sent to ${provider}.`, param);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw errors.invalidRequest(`Tool call arguments must be a JSON object to be sent to ${provider}.`, param);
  }
  return value as Record<string, unknown>;
}
