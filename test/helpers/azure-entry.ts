/**
 * A `type: azure` config entry on the v1 API with Microsoft Entra ID, its token endpoint at the
 * fake upstream `url` too (`/tenant-1/oauth2/v2.0/token`): client secret `entra-secret`.
 */
export function azureEntraEntry(url: string, deployments: Record<string, string>): Record<string, unknown> {
  return {
    type: 'azure',
    base_url: url,
    api_version: 'v1',
    tenant_id: 'tenant-1',
    client_id: 'app-1',
    client_secret: 'entra-secret',
    token_url: `${url}/tenant-1/oauth2/v2.0/token`,
    deployments,
  };
}
