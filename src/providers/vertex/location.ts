import { checkModelId, modelIdRules } from '../model-id.ts';

/** Where a Vertex AI project's models are called. */
export interface VertexLocation {
  project: string;
  /** A region (`us-east5`, `europe-west1`) or `global`. */
  location: string;
  /** Replaces the location's endpoint (a private endpoint, a proxy, a test's fake). */
  baseUrl?: string;
}

/** The publishers sluice calls: Google's Gemini and Anthropic's Claude. */
export type VertexPublisher = 'google' | 'anthropic';

/** The endpoint of a location: `https://{region}-aiplatform.googleapis.com`, or the global one. */
export function vertexEndpoint(where: VertexLocation): string {
  if (where.baseUrl) return where.baseUrl.replace(/\/+$/, '');
  return where.location === 'global'
    ? 'https://aiplatform.googleapis.com'
    : `https://${where.location}-aiplatform.googleapis.com`;
}

/**
 * `{endpoint}/v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}`.
 * The model id is held to Vertex's ids (one path segment, `@` for Claude's versions) and so needs no encoding.
 */
export function vertexModelUrl(where: VertexLocation, publisher: VertexPublisher, model: string, method: string): string {
  checkModelId('vertex', model, modelIdRules.vertex);
  const project = `projects/${encodeURIComponent(where.project)}/locations/${encodeURIComponent(where.location)}`;
  return `${vertexEndpoint(where)}/v1/${project}/publishers/${publisher}/models/${model}:${method}`;
}

/** Claude's models are Anthropic's on Vertex AI; every other model is Google's. */
export function publisherOf(model: string): VertexPublisher {
  return model.startsWith('claude-') ? 'anthropic' : 'google';
}
