import { defineConfig } from 'vitepress';

// The docs site: `npm run docs:build` writes it to docs/.vitepress/dist (git-ignored). VitePress fails
// the build on a link to a page that does not exist, so the build is also the internal link check
// (test/docs/links.test.ts checks the same links, and their #anchors, without a build).
export default defineConfig({
  title: 'sluice',
  description:
    'A self-hostable LLM API gateway: the OpenAI and Anthropic APIs over every provider, exact streams, honest accounting.',
  // The site is served from wherever it is copied: no absolute origin.
  cleanUrls: true,
  lastUpdated: false,
  // Files that are not pages of the site: a page links them as source, not as a page.
  srcExclude: ['**/README.md'],
  themeConfig: {
    search: { provider: 'local' },
    outline: [2, 3],
    sidebar: [
      {
        text: 'Start',
        items: [
          { text: 'Overview', link: '/' },
          { text: 'Getting started', link: '/getting-started' },
          { text: 'Configuration', link: '/configuration' },
          { text: 'Providers', link: '/providers' },
        ],
      },
      {
        text: 'API surfaces',
        items: [
          { text: 'Overview', link: '/api/' },
          { text: 'Chat completions', link: '/api/chat-completions' },
          { text: 'Responses', link: '/api/responses' },
          { text: 'Messages', link: '/api/messages' },
          { text: 'Embeddings', link: '/api/embeddings' },
          { text: 'Files and batches', link: '/api/batches' },
          { text: 'Images', link: '/api/images' },
          { text: 'Audio', link: '/api/audio' },
          { text: 'Dry run', link: '/api/dry-run' },
          { text: 'Realtime', link: '/api/realtime' },
          { text: 'Request log', link: '/api/request-log' },
          { text: 'MCP gateway', link: '/api/mcp' },
          { text: 'sluice/client', link: '/api/client' },
        ],
      },
      {
        text: 'Streams',
        items: [
          { text: 'The stream contract', link: '/streams/contract' },
          { text: 'The lifecycle of a stream', link: '/streams/lifecycle' },
          { text: 'Stream profiles', link: '/streams/profiles' },
          { text: 'Resuming a stream', link: '/streams/resume' },
          { text: 'sluice check', link: '/streams/check' },
        ],
      },
      {
        text: 'Governance',
        items: [
          { text: 'Keys, projects, endpoints', link: '/governance/keys' },
          { text: 'Tiers, limits, budgets', link: '/governance/tiers-limits-budgets' },
          { text: 'Spend reports and tags', link: '/governance/spend' },
          { text: 'Users, roles, SSO', link: '/governance/users' },
          { text: 'Routes and fallback', link: '/routing' },
          { text: 'Accounting', link: '/accounting' },
          { text: 'Console', link: '/console' },
        ],
      },
      {
        text: 'Operations',
        items: [
          { text: 'Overview', link: '/operations/' },
          { text: 'Deploy', link: '/operations/deploy' },
          { text: 'Container image', link: '/operations/container' },
          { text: 'Kubernetes', link: '/operations/kubernetes' },
          { text: 'Security at the edge', link: '/operations/security' },
          { text: 'Scale out', link: '/operations/scale-out' },
          { text: 'The response cache', link: '/operations/response-cache' },
          { text: 'Metrics, logs, traces', link: '/operations/observability' },
          { text: 'Analytics export', link: '/operations/analytics-export' },
          { text: 'Check and reload the config', link: '/operations/reload' },
          { text: 'The audit log', link: '/operations/audit-log' },
          { text: 'Reconciliation', link: '/operations/reconciliation' },
          { text: 'The ledger at scale', link: '/operations/ledger-storage' },
          { text: 'Upgrade', link: '/operations/upgrade' },
          { text: 'Back up and restore', link: '/operations/backup' },
          { text: 'Troubleshoot', link: '/operations/troubleshoot' },
        ],
      },
      {
        text: 'Reliability and performance',
        items: [
          { text: 'Reliability', link: '/reliability/' },
          { text: 'Reliability report', link: '/reliability/report' },
          { text: 'Benchmarks', link: '/benchmarks/' },
          { text: 'The ledger bench', link: '/benchmarks/ledger' },
        ],
      },
      {
        text: 'Reference',
        items: [
          { text: 'Configuration keys', link: '/reference/configuration' },
          { text: 'Error codes', link: '/reference/errors' },
        ],
      },
      {
        text: 'Contributing',
        items: [
          { text: 'Overview', link: '/contributing/' },
          { text: 'Layout and layers', link: '/contributing/layout' },
          { text: 'Tests', link: '/contributing/testing' },
          { text: 'Adding a provider', link: '/contributing/adding-a-provider' },
          { text: 'Adding a surface', link: '/contributing/adding-a-surface' },
          { text: 'Commits', link: '/contributing/commits' },
        ],
      },
    ],
  },
});
