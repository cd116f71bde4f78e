import type OpenAI from 'openai';

/** A chunk delta with sluice's reasoning fields (the SDK passes unknown fields through). */
export type Delta = OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta & {
  reasoning_content?: string;
  reasoning_signature?: string;
};

export interface Collected {
  content: string;
  reasoning: string;
  signature: string | undefined;
  calls: { id?: string; name?: string; args: string }[];
  finish: string | null;
  usage: OpenAI.CompletionUsage | undefined;
}

/** Rebuilds what an SDK client reads from a chat stream: text, reasoning, calls by index, finish, usage. */
export async function collect(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<Collected> {
  const out: Collected = { content: '', reasoning: '', signature: undefined, calls: [], finish: null, usage: undefined };
  for await (const chunk of stream) {
    if (chunk.usage) out.usage = chunk.usage;
    for (const choice of chunk.choices) {
      const delta = choice.delta as Delta;
      out.content += delta.content ?? '';
      out.reasoning += delta.reasoning_content ?? '';
      if (delta.reasoning_signature) out.signature = delta.reasoning_signature;
      for (const tc of delta.tool_calls ?? []) {
        out.calls[tc.index] ??= { args: '' };
        if (tc.id) out.calls[tc.index].id = tc.id;
        if (tc.function?.name) out.calls[tc.index].name = tc.function.name;
        out.calls[tc.index].args += tc.function?.arguments ?? '';
      }
      if (choice.finish_reason) out.finish = choice.finish_reason;
    }
  }
  return out;
}
