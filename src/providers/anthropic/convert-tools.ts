import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { functionTools } from '../function-tools.ts';
import { claudeHasNativeJsonSchema } from '../response-format-tool.ts';
import type { Unsupported } from './unsupported.ts';

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  /** Strict tool use: the call's input follows the schema exactly (the models with structured outputs). */
  strict?: boolean;
}

export type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface ConvertedTools {
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
}

/**
 * tools / tool_choice / parallel_tool_calls -> Anthropic's. `required` is Anthropic's `any`;
 * parallel_tool_calls: false is `disable_parallel_tool_use` on the choice. With extended thinking
 * Anthropic only allows auto and none ("Extended thinking" > tool use), so a forced choice is
 * unsupported then. Without tools there is nothing to choose from and tool_choice is left out.
 * `answerTool` stands for a JSON response format (response-format.ts): it is forced unless the
 * client forced a tool of its own. A tool's `strict: true` is Anthropic's strict tool use on the
 * models that have structured outputs (Claude 4.5 on); older models have none, and it is left out.
 */
export function convertTools(
  request: CanonicalRequest,
  model: string,
  thinking: boolean,
  unsupported: Unsupported,
  answerTool?: AnthropicTool,
): ConvertedTools {
  const functions = functionTools(request, 'anthropic', unsupported);
  if (functions.length === 0 && !answerTool) return {};
  const strictTools = claudeHasNativeJsonSchema(model);
  const tools = functions.map(({ function: f }) => {
    const tool: AnthropicTool = { name: f.name, input_schema: f.parameters ?? { type: 'object', properties: {} } };
    if (f.description !== undefined) tool.description = f.description;
    if (f.strict === true && strictTools) tool.strict = true;
    return tool;
  });
  const parallel = request.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  const choice = request.tool_choice;
  if (answerTool && typeof choice !== 'object') {
    // The turn ends in the JSON answer, once; or, when the client's tools may be called, in a call
    // of one of them (`any`: a tool, not free text).
    const mayCall = functions.length > 0 && choice !== 'none';
    return {
      tools: [...tools, answerTool],
      tool_choice: mayCall
        ? { type: 'any', ...parallel }
        : { type: 'tool', name: answerTool.name, disable_parallel_tool_use: true },
    };
  }
  if (answerTool) tools.push(answerTool);
  if (choice === 'none') return { tools, tool_choice: { type: 'none' } };
  if (choice === 'required' || typeof choice === 'object') {
    if (thinking) {
      unsupported(
        'tool_choice',
        'anthropic cannot force a tool call while thinking (reasoning_effort); use tool_choice "auto" or "none".',
      );
    } else {
      const forced: AnthropicToolChoice =
        choice === 'required' ? { type: 'any', ...parallel } : { type: 'tool', name: choice.function.name, ...parallel };
      return { tools, tool_choice: forced };
    }
  }
  if (choice === 'auto' || request.parallel_tool_calls === false) return { tools, tool_choice: { type: 'auto', ...parallel } };
  return { tools };
}
