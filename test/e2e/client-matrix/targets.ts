import { anthropicStreamBody } from '../../helpers/anthropic-fixtures.ts';
import { bedrockBody } from '../../helpers/bedrock-fixtures.ts';
import type { UpstreamReply } from '../../helpers/fake-upstream.ts';
import { openAIStreamBody } from '../../helpers/fixtures.ts';
import { geminiStreamBody } from '../../helpers/gemini-fixtures.ts';

/** What a library must read from a target's stream: the text (or its start), the tool call, the usage. */
export interface Expected {
  text: string;
  /** The text must start with `text` (a long recording) instead of equal it. */
  textPrefix?: boolean;
  usage: { input: number; output: number } | 'reported';
}

export interface ToolExpected {
  name: string;
  args: Record<string, unknown>;
  usage: { input: number; output: number } | 'reported';
}

/**
 * A model behind sluice: the mock (its own provider) or a native provider whose recorded upstream
 * answer the fake upstream replays. `textReply`/`toolReply` are the upstream bodies; an agent loop
 * gets the tool recording first, then the text one (the model's answer after the tool ran).
 */
export interface Target {
  name: string;
  textModel: string;
  toolModel: string;
  textReply?: () => UpstreamReply;
  toolReply?: () => UpstreamReply;
  text: Expected;
  tool: ToolExpected;
}

const SSE = { 'content-type': 'text/event-stream' };
const EVENTSTREAM = { 'content-type': 'application/vnd.amazon.eventstream' };

export const PROMPT = 'hi';

/** What a recording replays and what it must read as, whichever provider's API sends it. */
type Recording = Pick<Target, 'textReply' | 'toolReply' | 'text' | 'tool'>;

const anthropicRecording: Recording = {
  textReply: () => ({ body: anthropicStreamBody('anthropic/text-haiku45.sse') }),
  toolReply: () => ({ body: anthropicStreamBody('anthropic/tool-use.sse') }),
  text: { text: '1\n2\n3', usage: { input: 15, output: 9 } },
  tool: { name: 'weather', args: { latitude: '52.5200', longitude: '13.4050' }, usage: { input: 633, output: 75 } },
};

const geminiRecording: Recording = {
  textReply: () => ({ body: geminiStreamBody('gemini/text-2.0-flash.sse') }),
  toolReply: () => ({ body: geminiStreamBody('gemini/function-call-2.0-flash.sse') }),
  text: { text: 'The capital of France is Paris.\n', usage: { input: 13, output: 8 } },
  tool: { name: 'get_capital', args: { country: 'France' }, usage: { input: 52, output: 5 } },
};

const openAIRecording: Recording = {
  textReply: () => ({ headers: SSE, body: openAIStreamBody('openai-chat/gpt4o-mini-text-after-tool.sse') }),
  toolReply: () => ({ headers: SSE, body: openAIStreamBody('openai-chat/gpt4o-mini-tool-call.sse') }),
  text: { text: 'The capital of the UK is London.', usage: { input: 78, output: 9 } },
  tool: { name: 'get_capital', args: { country: 'UK' }, usage: { input: 53, output: 15 } },
};

export const targets: Target[] = [
  {
    name: 'mock',
    textModel: 'mock/echo',
    toolModel: 'mock/tools',
    text: { text: `You said: ${PROMPT}`, usage: 'reported' },
    tool: { name: 'get_weather', args: { location: 'Paris', unit: 'celsius' }, usage: 'reported' },
  },
  {
    name: 'anthropic recording',
    textModel: 'anthropic/claude-haiku-4-5',
    toolModel: 'anthropic/claude-sonnet-4-5',
    ...anthropicRecording,
  },
  { name: 'google recording', textModel: 'google/gemini-2.0-flash', toolModel: 'google/gemini-2.0-flash', ...geminiRecording },
  {
    name: 'bedrock recording',
    textModel: 'bedrock/us.amazon.nova-micro-v1:0',
    toolModel: 'bedrock/us.amazon.nova-micro-v1:0',
    textReply: () => ({ headers: EVENTSTREAM, body: bedrockBody('bedrock/converse-text-nova-micro.b64') }),
    toolReply: () => ({ headers: EVENTSTREAM, body: bedrockBody('bedrock/converse-tool-use-nova-micro.b64') }),
    text: { text: 'The capital of France is Paris.', textPrefix: true, usage: { input: 13, output: 82 } },
    tool: { name: 'get_temperature', args: { city: 'Paris' }, usage: { input: 471, output: 91 } },
  },
  // Azure OpenAI and Vertex AI send what OpenAI's, Anthropic's and Gemini's APIs send.
  { name: 'azure recording', textModel: 'azure/gpt-4o-mini', toolModel: 'azure/gpt-4o-mini', ...openAIRecording },
  {
    name: 'vertex (Claude) recording',
    textModel: 'vertex/claude-haiku-4-5@20251001',
    toolModel: 'vertex/claude-sonnet-4-5@20250929',
    ...anthropicRecording,
  },
  { name: 'vertex (Gemini) recording', textModel: 'vertex/gemini-2.0-flash', toolModel: 'vertex/gemini-2.0-flash', ...geminiRecording },
  { name: 'openai-compatible recording', textModel: 'up/gpt-4o-mini', toolModel: 'up/gpt-4o-mini', ...openAIRecording },
];

/** A loose tool schema: the recordings' arguments differ, and the libraries validate against it. */
export const TOOL_PARAMETERS = { type: 'object', properties: {}, additionalProperties: true } as const;
