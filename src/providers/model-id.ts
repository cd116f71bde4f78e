import { errors } from '../errors/catalog.ts';

/**
 * What each kind of provider accepts as a model id, as data. The id comes from the client (after
 * `provider/`), and the request goes out with the operator's key: where a provider puts the id in
 * its URL path, an id with `..`, `/`, `?`, `#`, `%` or a control character could send that key to
 * another path on the provider's host (`google/../../../v1/admin/delete?x=`). So those ids are
 * held to what the provider's ids look like, and still encoded as one path segment.
 */
export interface ModelIdRule {
  pattern: RegExp;
  /** What a valid id looks like, for the 400. */
  expected: string;
}

/** One path segment that cannot be `.` or `..`: it starts with a letter or a digit. */
const SEGMENT = '[A-Za-z0-9][A-Za-z0-9._:-]*';

export const modelIdRules = {
  /**
   * The id travels in the JSON body (OpenAI-compatible servers, Anthropic): any text a server
   * might name a model with (`meta-llama/Llama-3.1-8B-Instruct`, `qwen3:8b`), but no control
   * characters and no more than 512 characters: it is also logged and kept in the ledger.
   */
  body: {
    pattern: /^[^\p{Cc}\p{Cs}]{1,512}$/u,
    expected: 'at most 512 characters, none of them control characters',
  },
  /**
   * Gemini: `{id}` goes in `/v1beta/models/{id}:generateContent`; a `models/` or `tunedModels/`
   * resource name is taken as it is (Gemini ids are lower-case letters, digits, `.` and `-`).
   */
  google: {
    pattern: /^(?:(?:models|tunedModels)\/)?[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/,
    expected: "letters, digits, '.', '_' and '-' (optionally after 'models/' or 'tunedModels/')",
  },
  /**
   * Vertex AI: `…/publishers/{publisher}/models/{id}:{method}`; Claude's ids carry their version
   * after `@` (`claude-sonnet-4-5@20250929`).
   */
  vertex: {
    pattern: /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/,
    expected: "letters, digits, '.', '_', '@' and '-'",
  },
  /**
   * Bedrock: `/model/{modelId}/converse`, the id percent-encoded as one segment as the AWS SDKs
   * do. Model and inference-profile ids (`us.anthropic.claude-sonnet-4-20250514-v1:0`) have no
   * `/`; ARNs have (`arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic…`),
   * and every segment of theirs starts with a letter or a digit (Converse API reference, modelId).
   */
  bedrock: {
    pattern: new RegExp(
      `^(?=.{1,2048}$)(?:arn:aws(?:-[a-z]+)*:(?:bedrock|sagemaker):[a-z0-9-]*:[0-9]*:[a-z-]+/${SEGMENT}(?:/${SEGMENT})*|${SEGMENT})$`,
    ),
    expected: "a Bedrock model id, inference profile id or ARN (letters, digits, '.', '_', ':', '-', and '/' inside an ARN)",
  },
} satisfies Record<string, ModelIdRule>;

/** The model id when the provider accepts it; else a 400 naming `model`. */
export function checkModelId(provider: string, model: string, rule: ModelIdRule): string {
  if (rule.pattern.test(model)) return model;
  const shown = JSON.stringify(model.length > 80 ? `${model.slice(0, 80)}…` : model);
  throw errors.invalidRequest(`${shown} is not a valid ${provider} model id: expected ${rule.expected}.`, 'model');
}
