/**
 * The layers of src/, top to bottom: a folder may import its own files and any folder of a layer below
 * its own, never one above it nor another folder of its own layer. `npm run lint` enforces it
 * (check-layers.ts), type-only imports included, and refuses any circle between files.
 *
 * Why this order: each layer is what the one above it is built from. The CLI starts the server; the
 * server mounts the console and every surface; a surface (`surfaces/chat`, `responses`, `messages`,
 * `embeddings`: one client API's parse, canonical mapping, encoders and runs) sits below the console,
 * which never needs one, and above the pipeline, whose lifecycle it plugs into as a ModelOperation
 * and whose shared stream loop and routed calls it runs; the pipeline never names a surface. The
 * pipeline asks governance (may this caller spend?), resume (keep this stream for a reconnect) and
 * the response cache (is this answer kept already?); they lean on telemetry, routing (which upstream, with fallback), the store, the providers
 * (canonical <-> wire), accounting (usage and price), the protocol (the canonical model and the wire
 * pieces every surface shares: SSE, HTTP, the stream checker), the upstream HTTP client, and at the
 * bottom the config schema and the error catalog. `admission/` holds only the contract of the admit
 * step (the caller, the admission, the master caller): the pipeline asks through it and governance
 * answers through it, so neither imports the other.
 * `mcp/` is the MCP gateway (/mcp): the server mounts it; it sits above the pipeline only to reach
 * what a tool call shares with model requests (the admit step, the ledger), and a surface may use it.
 * `reconcile/` compares the ledger (store/) with the providers' own usage and cost reports; the
 * server mounts its routes and runs its schedule.
 * `client/` is the SDK-side stream reader published as `sluice/client`: it imports nothing of the server.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['cli'],
  ['server'],
  ['console'],
  ['surfaces'],
  ['mcp'],
  ['pipeline'],
  ['governance', 'resume', 'reconcile', 'cache'],
  ['admission'],
  ['telemetry'],
  ['routing'],
  ['store'],
  ['providers'],
  ['accounting'],
  ['protocol'],
  ['upstream'],
  ['config', 'errors'],
];

/** Folders that stand apart: they import nothing of src/ outside themselves, and nothing imports them. */
export const APART: readonly string[] = ['client'];
