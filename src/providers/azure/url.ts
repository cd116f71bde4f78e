/** The `api-version` of the deployments API when none is configured: the newest GA version of its reference. */
export const DEFAULT_API_VERSION = '2024-10-21';

/** Which of Azure OpenAI's two APIs a resource is called through. */
export interface AzureApi {
  /** The resource's endpoint, `https://{resource}.openai.azure.com` (or `….cognitiveservices.azure.com`). */
  endpoint: string;
  /** The deployments API's `api-version`, or `v1` for the v1 API. */
  apiVersion: string;
}

/**
 * The URL of one Azure OpenAI operation, in either of its styles, for every path that has one
 * (chat/completions, embeddings, responses, and images, audio, files or batches alike):
 * - the v1 API: `{endpoint}/openai/v1/{path}`, the deployment named by the body's `model`;
 * - the deployments API: `{endpoint}/openai/deployments/{deployment}/{path}?api-version=…` for an
 *   operation of a deployment, `{endpoint}/openai/{path}?api-version=…` for one of the resource
 *   (responses, files, batches: pass no deployment).
 * The deployment is one path segment, encoded (the config's names are checked too).
 */
export function azureUrl(api: AzureApi, path: string, deployment?: string): string {
  const root = `${api.endpoint.replace(/\/+$/, '')}/openai`;
  if (api.apiVersion === 'v1') return `${root}/v1/${path}`;
  const version = `api-version=${encodeURIComponent(api.apiVersion)}`;
  if (deployment === undefined) return `${root}/${path}?${version}`;
  return `${root}/deployments/${encodeURIComponent(deployment)}/${path}?${version}`;
}

/**
 * The URL of a path of the Files and Batch API (`/files`, `/batches/{id}/cancel`, as the batch
 * surfaces name them) at the resource, with the client's query (`limit`, `after`, `purpose`)
 * after the `api-version` azureUrl puts there: one query, joined with `&`.
 */
export function azureResourceUrl(api: AzureApi, path: string, search?: URLSearchParams): string {
  const url = azureUrl(api, path.replace(/^\/+/, ''));
  const query = search?.toString();
  if (!query) return url;
  return `${url}${url.includes('?') ? '&' : '?'}${query}`;
}
