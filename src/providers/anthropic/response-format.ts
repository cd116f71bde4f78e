import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { claudeHasNativeJsonSchema, rejectReservedToolName, responseFormatTool } from '../response-format-tool.ts';
import type { AnthropicTool } from './convert-tools.ts';
import type { Unsupported } from './unsupported.ts';

export interface AnthropicResponseFormat {
  /** Structured output of the model's own (Messages API `output_config.format`). */
  output_config?: { format: { type: 'json_schema'; schema: Record<string, unknown> } };
  /** Otherwise the tool whose input is the answer, offered and forced (../response-format-tool.ts). */
  answerTool?: AnthropicTool;
}

/**
 * `response_format` on Anthropic. A JSON Schema goes as `output_config.format` to the models that
 * constrain their output to one (Claude 4.5 on); for older models, and for `json_object` (there
 * is no schema to constrain to), the answer is asked for as the input of a forced tool, which the
 * stream decoder turns back into content. Anthropic cannot force a tool while thinking, so that
 * combination is unsupported (a 400 naming response_format, or plain text under drop_params).
 */
export function anthropicResponseFormat(
  request: CanonicalRequest,
  model: string,
  thinking: boolean,
  unsupported: Unsupported,
): AnthropicResponseFormat {
  rejectReservedToolName(request);
  const format = request.response_format;
  if (format?.type === 'json_schema' && format.json_schema.schema && claudeHasNativeJsonSchema(model)) {
    return { output_config: { format: { type: 'json_schema', schema: format.json_schema.schema } } };
  }
  const tool = responseFormatTool(request);
  if (!tool) return {};
  if (thinking) {
    unsupported(
      'response_format',
      `anthropic cannot force the JSON answer of ${model} while thinking (reasoning_effort); Claude 4.5 and later models take a json_schema then.`,
    );
    return {};
  }
  return { answerTool: { name: tool.name, description: tool.description, input_schema: tool.schema } };
}
