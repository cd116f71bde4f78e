import { errors } from '../errors/catalog.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import { isFunctionTool } from './function-tools.ts';

/**
 * A JSON `response_format` on a provider whose model has no structured output of its own: the
 * answer is asked for as the input of one forced tool, and the decoder turns that tool's input
 * back into message content (text deltas, finish reason `stop`), so the client sees what OpenAI
 * would send. The name is sluice's: the decoders recognise the tool by it, so a client tool may
 * not take it.
 */
export const RESPONSE_FORMAT_TOOL = 'sluice_structured_output';

export interface ResponseFormatTool {
  name: typeof RESPONSE_FORMAT_TOOL;
  description: string;
  /** The input schema: the client's JSON Schema, or any object for `json_object`. */
  schema: Record<string, unknown>;
}

/** The request's JSON response format as a tool; undefined when it asks for text. */
export function responseFormatTool(request: CanonicalRequest): ResponseFormatTool | undefined {
  const format = request.response_format;
  if (format?.type === 'json_object') {
    return { name: RESPONSE_FORMAT_TOOL, description: ANSWER, schema: { type: 'object' } };
  }
  if (format?.type !== 'json_schema') return undefined;
  const { name, description, schema } = format.json_schema;
  return {
    name: RESPONSE_FORMAT_TOOL,
    description: `${ANSWER} The answer is a ${name}${description ? `: ${description}` : '.'}`,
    schema: schema ?? { type: 'object' },
  };
}

const ANSWER = 'Give your final answer by calling this tool: its input is the answer, as JSON.';

/** A 400 for a client tool that takes sluice's name (its calls would come back as content). */
export function rejectReservedToolName(request: CanonicalRequest): void {
  request.tools?.forEach((tool, i) => {
    if (isFunctionTool(tool) && tool.function.name === RESPONSE_FORMAT_TOOL) {
      throw errors.invalidRequest(`The tool name ${RESPONSE_FORMAT_TOOL} is reserved by sluice.`, `tools[${i}].function.name`);
    }
  });
}

/**
 * Claude models from 4.5 on constrain their output to a JSON Schema themselves (Messages API
 * `output_config.format`, Bedrock Converse `outputConfig.textFormat`); earlier ones do not.
 * Reads the version from ids such as `claude-sonnet-4-5-20250929`, `claude-opus-5`,
 * `claude-3-7-sonnet-latest` and `us.anthropic.claude-haiku-4-5-20251001-v1:0` (a date is not a
 * minor version); an id without one (`claude-mythos-preview`) is not assumed to have it.
 */
export function claudeHasNativeJsonSchema(model: string): boolean {
  const at = model.indexOf('claude-');
  if (at < 0) return false;
  const parts = model.slice(at + 'claude-'.length).split(/[-.:@]/);
  const number = (s: string | undefined) => (s !== undefined && /^\d{1,2}$/.test(s) ? Number(s) : undefined);
  const first = parts.findIndex((p) => number(p) !== undefined);
  if (first < 0) return false;
  const major = number(parts[first])!;
  const minor = number(parts[first + 1]) ?? 0;
  return major > 4 || (major === 4 && minor >= 5);
}
