import type { LedgerRecord } from '../accounting/ledger-record.ts';

/**
 * A surface's GenAI operation name (`gen_ai.operation.name`): the conventions name `chat` and
 * `embeddings`; images and audio, which they do not name, are `generate_content`, their term for
 * a model call that makes content of any modality.
 */
export function genAiOperation(surface: LedgerRecord['surface']): 'chat' | 'embeddings' | 'generate_content' {
  if (surface === 'embeddings') return 'embeddings';
  if (surface === 'images' || surface.startsWith('audio.')) return 'generate_content';
  return 'chat';
}
