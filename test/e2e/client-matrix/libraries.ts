import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import Anthropic from '@anthropic-ai/sdk';
import { ChatOpenAI } from '@langchain/openai';
import type { AIMessageChunk } from '@langchain/core/messages';
import { Agent, OpenAIProvider, Runner, tool as agentTool } from '@openai/agents';
import { jsonSchema, streamText, tool as aiTool, type LanguageModel } from 'ai';
import OpenAI from 'openai';
import { PROMPT, TOOL_PARAMETERS } from './targets.ts';

/** What a library read from one streamed call, in the same terms for every library. */
export interface Reading {
  text: string;
  toolCall?: { name: string; args: Record<string, unknown> };
  usage: { input: number; output: number };
}

/** One call of one library: given sluice's URL, a model and a tool name (none: a text call), what it read. */
export interface LibraryCall {
  name: string;
  /** An agent loop: runs the tool and asks again, so its text follows the tool call. */
  agentLoop?: boolean;
  run(gatewayUrl: string, model: string, toolName: string | undefined): Promise<Reading>;
}

const API_KEY = 'sk-client-matrix';
const parse = (json: string): Record<string, unknown> => (json ? (JSON.parse(json) as Record<string, unknown>) : {});

const openaiChat: LibraryCall = {
  name: 'openai SDK / chat.completions.create stream',
  async run(url, model, toolName) {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: API_KEY, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: PROMPT }],
      stream: true,
      stream_options: { include_usage: true },
      ...(toolName ? { tools: [{ type: 'function', function: { name: toolName, parameters: TOOL_PARAMETERS } }] } : {}),
    });
    const reading: Reading = { text: '', usage: { input: 0, output: 0 } };
    let name = '';
    let args = '';
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      reading.text += delta?.content ?? '';
      for (const call of delta?.tool_calls ?? []) {
        name += call.function?.name ?? '';
        args += call.function?.arguments ?? '';
      }
      if (chunk.usage) reading.usage = { input: chunk.usage.prompt_tokens, output: chunk.usage.completion_tokens };
    }
    if (name) reading.toolCall = { name, args: parse(args) };
    return reading;
  },
};

const openaiResponses: LibraryCall = {
  name: 'openai SDK / responses.stream',
  async run(url, model, toolName) {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: API_KEY, maxRetries: 0 });
    const stream = client.responses.stream({
      model,
      input: PROMPT,
      ...(toolName ? { tools: [{ type: 'function', name: toolName, parameters: TOOL_PARAMETERS, strict: false }] } : {}),
    });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    const response = await stream.finalResponse();
    const call = response.output.find((item) => item.type === 'function_call');
    return {
      text,
      ...(call ? { toolCall: { name: call.name, args: parse(call.arguments) } } : {}),
      usage: { input: response.usage?.input_tokens ?? 0, output: response.usage?.output_tokens ?? 0 },
    };
  },
};

/** The Vercel AI SDK's streamText over a provider's model; the tool has no execute, so one step. */
function aiSdk(name: string, modelOf: (url: string, model: string) => LanguageModel): LibraryCall {
  return {
    name: `${name} / streamText`,
    async run(url, model, toolName) {
      const tools = toolName ? { [toolName]: aiTool({ inputSchema: jsonSchema<Record<string, unknown>>(TOOL_PARAMETERS) }) } : undefined;
      const result = streamText({ model: modelOf(url, model), prompt: PROMPT, tools, maxRetries: 0 });
      let text = '';
      for await (const piece of result.textStream) text += piece;
      const [calls, usage] = await Promise.all([result.toolCalls, result.usage]);
      const call = calls[0];
      return {
        text,
        ...(call ? { toolCall: { name: call.toolName, args: call.input as Record<string, unknown> } } : {}),
        usage: { input: usage.inputTokens ?? 0, output: usage.outputTokens ?? 0 },
      };
    },
  };
}

/** LangChain's ChatOpenAI `.stream()`, the chunks concatenated as LangChain's docs do. */
function langchain(useResponsesApi: boolean): LibraryCall {
  return {
    name: `LangChain ChatOpenAI${useResponsesApi ? ' useResponsesApi' : ''} / stream`,
    async run(url, model, toolName) {
      const chat = new ChatOpenAI({
        model,
        apiKey: API_KEY,
        configuration: { baseURL: `${url}/v1` },
        streamUsage: true,
        useResponsesApi,
        maxRetries: 0,
      });
      const runnable = toolName ? chat.bindTools([{ type: 'function', function: { name: toolName, parameters: TOOL_PARAMETERS } }]) : chat;
      let whole: AIMessageChunk | undefined;
      for await (const chunk of await runnable.stream(PROMPT)) whole = whole ? whole.concat(chunk) : chunk;
      const call = whole?.tool_calls?.[0];
      return {
        text: typeof whole?.content === 'string' ? whole.content : (whole?.text ?? ''),
        ...(call ? { toolCall: { name: call.name, args: call.args } } : {}),
        usage: { input: whole?.usage_metadata?.input_tokens ?? 0, output: whole?.usage_metadata?.output_tokens ?? 0 },
      };
    },
  };
}

/** The OpenAI Agents SDK's streamed run: the tool runs, the model answers, the run's usage sums both calls. */
function agents(useResponses: boolean): LibraryCall {
  return {
    name: `OpenAI Agents SDK (${useResponses ? 'responses' : 'chat completions'}) / run stream`,
    agentLoop: true,
    async run(url, model, toolName) {
      let toolCall: Reading['toolCall'];
      const tools = toolName
        ? [
            agentTool({
              name: toolName,
              description: 'The tool of the recording.',
              parameters: { type: 'object', properties: {}, required: [], additionalProperties: true },
              strict: false,
              execute: async (args) => {
                toolCall = { name: toolName, args: args as Record<string, unknown> };
                return 'done';
              },
            }),
          ]
        : [];
      const openAIClient = new OpenAI({ baseURL: `${url}/v1`, apiKey: API_KEY, maxRetries: 0 });
      const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient, useResponses }), tracingDisabled: true });
      const agent = new Agent({ name: 'matrix', instructions: 'Answer.', model, tools });
      const result = await runner.run(agent, PROMPT, { stream: true, maxTurns: 3 });
      let text = '';
      for await (const piece of result.toTextStream()) text += piece;
      await result.completed;
      const usage = result.runContext.usage;
      return { text, ...(toolCall ? { toolCall } : {}), usage: { input: usage.inputTokens, output: usage.outputTokens } };
    },
  };
}

const anthropicSdk: LibraryCall = {
  name: '@anthropic-ai/sdk / messages.stream',
  async run(url, model, toolName) {
    const client = new Anthropic({ baseURL: url, apiKey: API_KEY, maxRetries: 0 });
    const stream = client.messages.stream({
      model,
      max_tokens: 1024,
      messages: [{ role: 'user', content: PROMPT }],
      ...(toolName ? { tools: [{ name: toolName, input_schema: TOOL_PARAMETERS }] } : {}),
    });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const message = await stream.finalMessage();
    const call = message.content.find((block) => block.type === 'tool_use');
    return {
      text,
      ...(call ? { toolCall: { name: call.name, args: call.input as Record<string, unknown> } } : {}),
      usage: { input: message.usage.input_tokens, output: message.usage.output_tokens },
    };
  },
};

export const libraries: LibraryCall[] = [
  openaiChat,
  openaiResponses,
  aiSdk('AI SDK @ai-sdk/openai-compatible', (url, model) =>
    createOpenAICompatible({ name: 'sluice', baseURL: `${url}/v1`, apiKey: API_KEY, includeUsage: true }).chatModel(model),
  ),
  aiSdk('AI SDK @ai-sdk/openai chat', (url, model) => createOpenAI({ baseURL: `${url}/v1`, apiKey: API_KEY }).chat(model)),
  aiSdk('AI SDK @ai-sdk/openai responses', (url, model) => createOpenAI({ baseURL: `${url}/v1`, apiKey: API_KEY }).responses(model)),
  langchain(false),
  langchain(true),
  agents(false),
  agents(true),
  anthropicSdk,
  aiSdk('AI SDK @ai-sdk/anthropic (/v1/messages)', (url, model) => createAnthropic({ baseURL: `${url}/v1`, apiKey: API_KEY })(model)),
];
