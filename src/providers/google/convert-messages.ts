import { errors } from '../../errors/catalog.ts';
import type { CanonicalMessage } from '../../protocol/canonical/request.ts';
import type { ParamPolicy } from './params.ts';
import { isLevelBasedModel } from './thinking-config.ts';
import { parseToolArguments } from '../parse-tool-arguments.ts';

export interface GeminiRequestPart {
  text?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { fileUri: string; mimeType?: string };
  functionCall?: { id: string; name: string; args: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: { output: string } };
  thoughtSignature?: string;
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiRequestPart[];
}

export interface ConvertedMessages {
  systemInstruction?: { parts: { text: string }[] };
  contents: GeminiContent[];
}

/**
 * Google's documented stand-in for a missing thought signature: Gemini 3 rejects a function call
 * in the current turn without one (ai.google.dev/gemini-api/docs/thought-signatures, FAQ), and
 * most OpenAI clients do not send `reasoning_signature` back.
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

type UserContent = Extract<CanonicalMessage, { role: 'user' }>['content'];
type AssistantMessage = Extract<CanonicalMessage, { role: 'assistant' }>;

/**
 * Canonical messages -> Gemini `contents` + `systemInstruction`:
 * - system and developer messages, wherever they are, become the system instruction, in order;
 * - assistant messages are `model` turns: text, refusal text, `functionCall` parts (arguments
 *   parsed back to an object), and the `reasoning_signature` as the `thoughtSignature` of the
 *   first function call (else the first part), where Gemini put it; `reasoning_content` is not
 *   sent back: the signature carries the model's reasoning state, the summary does not;
 * - consecutive tool results become one `user` turn of `functionResponse` parts (Gemini wants
 *   one response per call of the turn), each named after the assistant call it answers.
 */
export function convertMessages(messages: CanonicalMessage[], model: string, policy: ParamPolicy): ConvertedMessages {
  const system: { text: string }[] = [];
  const contents: GeminiContent[] = [];
  const callNames = new Map<string, string>();
  let toolTurn: GeminiContent | undefined;

  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    if (m.role !== 'tool' && m.role !== 'function') toolTurn = undefined;
    switch (m.role) {
      case 'system':
        if (typeof m.content === 'string') system.push({ text: m.content });
        else for (const p of m.content) system.push({ text: p.text });
        break;
      case 'user': {
        const parts = userParts(m.content, at, policy);
        if (parts.length > 0) contents.push({ role: 'user', parts });
        break;
      }
      case 'assistant': {
        const parts = assistantParts(m, at, model, callNames);
        if (parts.length > 0) contents.push({ role: 'model', parts });
        break;
      }
      case 'tool':
      case 'function': {
        const id = m.role === 'tool' ? m.tool_call_id : undefined;
        const name = m.role === 'tool' ? callNames.get(m.tool_call_id) : m.name;
        if (name === undefined) {
          throw errors.invalidRequest(
            `No assistant tool call with id '${id}' precedes this tool message; Gemini needs the name of the function it answers.`,
            `${at}.tool_call_id`,
          );
        }
        const output = typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text).join('');
        if (!toolTurn) {
          toolTurn = { role: 'user', parts: [] };
          contents.push(toolTurn);
        }
        toolTurn.parts.push({ functionResponse: { ...(id !== undefined && { id }), name, response: { output } } });
        break;
      }
    }
  });

  return system.length > 0 ? { systemInstruction: { parts: system }, contents } : { contents };
}

function userParts(content: UserContent, at: string, policy: ParamPolicy): GeminiRequestPart[] {
  if (typeof content === 'string') return [{ text: content }];
  const parts: GeminiRequestPart[] = [];
  content.forEach((p, j) => {
    const param = `${at}.content[${j}]`;
    switch (p.type) {
      case 'text':
        parts.push({ text: p.text });
        break;
      case 'image_url': {
        // data: URLs are sent inline; any other URL (https, gs://, a Files API URI) by reference.
        const url = p.image_url.url;
        if (url.startsWith('data:')) parts.push({ inlineData: dataUrl(url, `${param}.image_url.url`) });
        else {
          const mimeType = mimeFromUrl(url);
          parts.push({ fileData: { fileUri: url, ...(mimeType && { mimeType }) } });
        }
        break;
      }
      case 'input_audio':
        parts.push({ inlineData: { mimeType: `audio/${p.input_audio.format}`, data: p.input_audio.data } });
        break;
      case 'file': {
        const data = (p.file as { file_data?: unknown }).file_data;
        if (typeof data === 'string') parts.push({ inlineData: dataUrl(data, `${param}.file.file_data`) });
        else {
          const why = 'only inline files (file_data as a data: URL) can be sent; OpenAI file ids do not exist there';
          policy.unsupported(`${param}.file`, why);
        }
        break;
      }
    }
  });
  return parts;
}

function assistantParts(m: AssistantMessage, at: string, model: string, callNames: Map<string, string>): GeminiRequestPart[] {
  const parts: GeminiRequestPart[] = [];
  if (typeof m.content === 'string') {
    if (m.content !== '') parts.push({ text: m.content });
  } else if (Array.isArray(m.content)) {
    for (const p of m.content) {
      const text = p.type === 'text' ? p.text : p.type === 'refusal' ? p.refusal : undefined;
      if (typeof text === 'string' && text !== '') parts.push({ text });
    }
  }
  if (m.refusal) parts.push({ text: m.refusal });
  (m.tool_calls ?? []).forEach((call, j) => {
    callNames.set(call.id, call.function.name);
    const args = parseToolArguments(call.function.arguments, 'google', `${at}.tool_calls[${j}].function.arguments`);
    parts.push({ functionCall: { id: call.id, name: call.function.name, args } });
  });
  const hasCalls = (m.tool_calls?.length ?? 0) > 0;
  const signature = m.reasoning_signature || (hasCalls && isLevelBasedModel(model) ? SKIP_SIGNATURE : undefined);
  if (signature) {
    const carrier = parts.find((p) => p.functionCall) ?? parts[0];
    // A turn that was only reasoning comes back as Gemini sent it: an empty text part with the signature.
    if (carrier) carrier.thoughtSignature = signature;
    else parts.push({ text: '', thoughtSignature: signature });
  }
  return parts;
}

function dataUrl(url: string, param: string): { mimeType: string; data: string } {
  const m = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (m) {
    if (m[2].split(';').includes('base64')) return { mimeType: m[1], data: m[3] };
    try {
      return { mimeType: m[1], data: Buffer.from(decodeURIComponent(m[3]), 'utf8').toString('base64') };
    } catch {
      // malformed percent-encoding: reported below
    }
  }
  throw errors.invalidRequest('Expected a data URL with a media type, e.g. data:image/png;base64,....', param);
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};

/** The media type a file URL's extension announces (Gemini's fileData takes it when known). */
function mimeFromUrl(url: string): string | undefined {
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  return ext && Object.hasOwn(MIME_BY_EXTENSION, ext) ? MIME_BY_EXTENSION[ext] : undefined;
}
