import type {
  CanonicalAssistantPart,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTextPart,
  CanonicalUserPart,
  Extra,
} from '../../protocol/canonical/request.ts';

/**
 * The canonical request as a Chat Completions body (without `model` and `stream`, which the
 * adapter sets). The canonical request speaks this vocabulary already, so this only puts back
 * what the chat surface folded away: each `extra` in the object it came from, `developer` as a
 * role. A chat client's body therefore goes upstream as it was sent, unknown fields included.
 * `reasoning_signature` is sluice's own round-trip field for native providers: never sent.
 */
export function convertRequest(request: CanonicalRequest): Record<string, unknown> {
  const { model: _model, messages, extra, ...fields } = request;
  return { ...extra, ...fields, messages: messages.map(convertMessage) };
}

function convertMessage(message: CanonicalMessage): Record<string, unknown> {
  switch (message.role) {
    case 'system': {
      const { extra, developer, content, ...fields } = message;
      return { ...extra, ...fields, role: developer ? 'developer' : 'system', content: textContent(content) };
    }
    case 'user': {
      const { extra, content, ...fields } = message;
      return { ...extra, ...fields, content: typeof content === 'string' ? content : content.map(userPart) };
    }
    case 'assistant': {
      const { extra, reasoning_signature: _signature, content, ...fields } = message;
      const body: Record<string, unknown> = { ...extra, ...fields };
      if (content !== undefined) body.content = Array.isArray(content) ? content.map(assistantPart) : content;
      return body;
    }
    case 'tool': {
      const { extra, content, ...fields } = message;
      return { ...extra, ...fields, content: textContent(content) };
    }
    case 'function': {
      const { extra, ...fields } = message;
      return { ...extra, ...fields };
    }
  }
}

function textContent(content: string | CanonicalTextPart[]): string | Record<string, unknown>[] {
  return typeof content === 'string' ? content : content.map(textPart);
}

function textPart(part: CanonicalTextPart): Record<string, unknown> {
  return withExtra(part);
}

function userPart(part: CanonicalUserPart): Record<string, unknown> | CanonicalUserPart {
  if (part.type === 'text') return textPart(part);
  if (part.type === 'file') return { ...part, file: withExtra(part.file) };
  return part;
}

function assistantPart(part: CanonicalAssistantPart): unknown {
  // An opaque part (a type sluice does not model) has no `extra`: it is all as sent.
  return part.type === 'text' || part.type === 'refusal' ? withExtra(part as { extra?: Extra }) : part;
}

/** The object with its `extra` fields back in place (the named fields win, as they were checked). */
function withExtra<T extends { extra?: Extra }>(value: T): Record<string, unknown> {
  const { extra, ...fields } = value;
  return extra ? { ...extra, ...fields } : fields;
}
