import { errors } from '../../errors/catalog.ts';
import type { CanonicalFunctionTool, CanonicalRequest } from '../../protocol/canonical/request.ts';
import type { UpstreamRequest } from '../../upstream/http-client.ts';
import { functionTools } from '../function-tools.ts';
import { checkModelId, modelIdRules } from '../model-id.ts';
import { claudeHasNativeJsonSchema, rejectReservedToolName, responseFormatTool } from '../response-format-tool.ts';
import { type ConverseBlock, type ConverseMessage, convertMessages, type SystemBlock } from './convert-messages.ts';

export interface BedrockTarget {
  /** `https://bedrock-runtime.{region}.amazonaws.com` or an override. */
  endpoint: string;
  /** Leave out what Converse cannot honour instead of answering 400. */
  dropParams: boolean;
}

export interface ConverseBody {
  messages: ConverseMessage[];
  system?: SystemBlock[];
  inferenceConfig: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: { toolSpec: ToolSpec }[]; toolChoice?: Record<string, object> };
  additionalModelRequestFields?: { thinking: { type: 'enabled'; budget_tokens: number } };
  outputConfig?: {
    textFormat: { type: 'json_schema'; structure: { jsonSchema: { schema: string; name: string; description?: string } } };
  };
  requestMetadata?: Record<string, string>;
  serviceTier?: { type: string };
}

interface ToolSpec {
  name: string;
  description?: string;
  inputSchema: { json: unknown };
  strict?: boolean;
}

/**
 * Anthropic's extended-thinking budget per reasoning effort (1024 is Anthropic's minimum).
 * OpenAI counts reasoning inside max_tokens, and so does Anthropic: the budget must stay below it.
 */
const thinkingBudget: Record<string, number> = { minimal: 1024, low: 2048, medium: 8192, high: 16384, xhigh: 32768 };
const MIN_THINKING_BUDGET = 1024;
/** Room for the answer after the thinking when the client set no max_tokens. */
const ANSWER_TOKENS = 4096;

/** Converse (`/converse`) or ConverseStream (`/converse-stream`), unsigned. */
export function buildBedrockRequest(
  request: CanonicalRequest,
  model: string,
  stream: boolean,
  target: BedrockTarget,
): UpstreamRequest {
  checkModelId('bedrock', model, modelIdRules.bedrock);
  const body = buildConverseBody(request, model, target.dropParams);
  return {
    // One path segment whatever the id holds (an ARN's `/` and `:` are percent-encoded, as the AWS SDKs do).
    url: `${target.endpoint.replace(/\/+$/, '')}/model/${encodeURIComponent(model)}/${stream ? 'converse-stream' : 'converse'}`,
    headers: {
      'content-type': 'application/json',
      accept: stream ? 'application/vnd.amazon.eventstream' : 'application/json',
    },
    body: JSON.stringify(body),
  };
}

/** A parameter Converse cannot honour: 400 naming it, or left out under drop_params. */
type Unsupported = (param: string, why: string) => void;

export function buildConverseBody(request: CanonicalRequest, model: string, dropParams: boolean): ConverseBody {
  const unsupported: Unsupported = (param, why) => {
    if (!dropParams) throw errors.invalidRequest(`${why} (set drop_params: true on the bedrock provider to ignore it).`, param);
  };
  const r = request;
  checkUnsupportedParams(r, unsupported);

  const { system, messages } = convertMessages(r.messages);
  const body: ConverseBody = { messages, inferenceConfig: inferenceConfig(r) };
  if (system.length > 0) body.system = system;

  const thinking = thinkingFields(r, model, body.inferenceConfig, unsupported);
  if (thinking) body.additionalModelRequestFields = thinking;

  const answer = answerTool(r, model, body, unsupported);
  const toolConfig = buildToolConfig(r, messages, unsupported, answer);
  if (toolConfig) body.toolConfig = toolConfig;

  const metadata = requestMetadata(r);
  if (Object.keys(metadata).length > 0) body.requestMetadata = metadata;

  const tier = serviceTier(r.service_tier, unsupported);
  if (tier) body.serviceTier = tier;

  return body;
}

/** The OpenAI parameters Converse has no counterpart for. */
function checkUnsupportedParams(r: CanonicalRequest, unsupported: Unsupported): void {
  if (r.n != null && r.n > 1) unsupported('n', 'Bedrock Converse returns one choice; n > 1 is not supported');
  if (r.presence_penalty) unsupported('presence_penalty', 'Bedrock Converse has no presence_penalty');
  if (r.frequency_penalty) unsupported('frequency_penalty', 'Bedrock Converse has no frequency_penalty');
  if (r.logit_bias && Object.keys(r.logit_bias).length > 0) unsupported('logit_bias', 'Bedrock Converse has no logit_bias');
  if (r.logprobs) unsupported('logprobs', 'Bedrock Converse returns no logprobs');
  if (r.top_logprobs) unsupported('top_logprobs', 'Bedrock Converse returns no logprobs');
  if (r.seed != null) unsupported('seed', 'Bedrock Converse has no seed');
  if (r.parallel_tool_calls === false) unsupported('parallel_tool_calls', 'Bedrock Converse cannot turn parallel tool calls off');
}

function inferenceConfig(r: CanonicalRequest): ConverseBody['inferenceConfig'] {
  const inference: ConverseBody['inferenceConfig'] = {};
  const maxTokens = r.max_completion_tokens ?? r.max_tokens ?? undefined;
  if (maxTokens !== undefined) inference.maxTokens = maxTokens;
  if (r.temperature != null) inference.temperature = r.temperature;
  if (r.top_p != null) inference.topP = r.top_p;
  if (r.stop != null) {
    const stops = typeof r.stop === 'string' ? [r.stop] : r.stop;
    if (stops.length > 0) inference.stopSequences = stops;
  }
  return inference;
}

/**
 * reasoning_effort as Anthropic's thinking budget, which must stay below max_tokens: without a
 * max_tokens, one is set (`inference` is updated) that leaves ANSWER_TOKENS for the answer.
 */
function thinkingFields(
  r: CanonicalRequest,
  model: string,
  inference: ConverseBody['inferenceConfig'],
  unsupported: Unsupported,
): ConverseBody['additionalModelRequestFields'] {
  const effort = r.reasoning_effort;
  if (!effort || effort === 'none') return undefined;
  if (!isAnthropic(model)) {
    unsupported(
      'reasoning_effort',
      `sluice maps reasoning_effort to a thinking budget for Anthropic models on Bedrock only, not ${model}`,
    );
    return undefined;
  }
  let budget = thinkingBudget[effort];
  if (inference.maxTokens === undefined) inference.maxTokens = budget + ANSWER_TOKENS;
  else budget = Math.min(budget, inference.maxTokens - 1);
  if (budget >= MIN_THINKING_BUDGET) return { thinking: { type: 'enabled', budget_tokens: budget } };
  unsupported('reasoning_effort', `thinking needs a budget of at least ${MIN_THINKING_BUDGET} tokens below max_tokens`);
  return undefined;
}

function requestMetadata(r: CanonicalRequest): Record<string, string> {
  const metadata: Record<string, string> = { ...r.metadata };
  // Converse's requestMetadata is what invocation logs can be filtered by: the end user belongs there.
  if (r.user !== undefined && metadata.user === undefined) metadata.user = r.user;
  // So is OpenAI's safety_identifier (not modelled, so in `extra`): the user for abuse detection.
  const safety = r.extra?.safety_identifier;
  if (typeof safety === 'string' && metadata.safety_identifier === undefined) metadata.safety_identifier = safety;
  return metadata;
}

function serviceTier(tier: CanonicalRequest['service_tier'], unsupported: Unsupported): ConverseBody['serviceTier'] {
  if (tier === 'default' || tier === 'flex' || tier === 'priority') return { type: tier };
  if (tier != null && tier !== 'auto')
    unsupported('service_tier', `Bedrock has no service tier "${tier}" (default, flex or priority)`);
  return undefined;
}

/**
 * `response_format` on Converse. A JSON Schema is `outputConfig.textFormat`, which Bedrock's
 * structured-output models honour (Claude from 4.5, and the open-weight models that have it);
 * Claude before 4.5 does not, and `json_object` has no schema to give: then the answer is asked
 * for as the input of a forced tool, which the decoders turn back into content. A tool cannot be
 * forced while Claude thinks, so that is unsupported.
 */
function answerTool(r: CanonicalRequest, model: string, body: ConverseBody, unsupported: Unsupported): ToolSpec | undefined {
  rejectReservedToolName(r);
  const format = r.response_format;
  if (format?.type === 'json_schema' && (!isAnthropic(model) || claudeHasNativeJsonSchema(model))) {
    const { name, description, schema } = format.json_schema;
    body.outputConfig = {
      // JsonSchemaDefinition.schema is a string holding the schema (Bedrock API reference).
      textFormat: {
        type: 'json_schema',
        structure: { jsonSchema: { schema: JSON.stringify(schema ?? {}), name, ...(description ? { description } : {}) } },
      },
    };
    return undefined;
  }
  const tool = responseFormatTool(r);
  if (!tool) return undefined;
  if (body.additionalModelRequestFields?.thinking) {
    unsupported('response_format', `Bedrock cannot force the JSON answer of ${model} while it thinks (reasoning_effort)`);
    return undefined;
  }
  return { name: tool.name, description: tool.description, inputSchema: { json: tool.schema } };
}

function buildToolConfig(
  r: CanonicalRequest,
  messages: ConverseMessage[],
  unsupported: Unsupported,
  answer: ToolSpec | undefined,
): ConverseBody['toolConfig'] {
  const functions = functionTools(r, 'bedrock', unsupported);
  const choice = r.tool_choice;
  if (answer && typeof choice !== 'object') {
    // The turn ends in the JSON answer, or, when the client's tools may be called, in one of them.
    const mayCall = functions.length > 0 && choice !== 'none';
    const tools = [...functions.map(toolSpec), answer].map((spec) => ({ toolSpec: spec }));
    return { tools, toolChoice: mayCall ? { any: {} } : { tool: { name: answer.name } } };
  }
  if (functions.length === 0) return undefined;
  if (choice === 'none') {
    // Converse has no "none": the tools are left out, which it only accepts while no tool blocks are in the conversation.
    if (!messages.some((m) => m.content.some(isToolBlock))) return undefined;
    unsupported('tool_choice', 'Bedrock Converse has no tool_choice "none" once the conversation holds tool calls');
  }
  const tools = [...functions.map(toolSpec), ...(answer ? [answer] : [])].map((spec) => ({ toolSpec: spec }));
  if (choice === 'auto') return { tools, toolChoice: { auto: {} } };
  if (choice === 'required') return { tools, toolChoice: { any: {} } };
  if (choice && typeof choice === 'object') return { tools, toolChoice: { tool: { name: choice.function.name } } };
  return { tools };
}

function toolSpec({ function: f }: CanonicalFunctionTool): ToolSpec {
  const spec: ToolSpec = { name: f.name, inputSchema: { json: f.parameters ?? { type: 'object', properties: {} } } };
  if (f.description) spec.description = f.description;
  if (f.strict) spec.strict = true;
  return spec;
}

function isToolBlock(block: ConverseBlock): boolean {
  return 'toolUse' in block || 'toolResult' in block;
}

/** Anthropic model ids, inference profiles included: `anthropic.claude-…`, `us.anthropic.claude-…`, ARNs holding them. */
function isAnthropic(model: string): boolean {
  return model.includes('anthropic.');
}
