import { errors } from '../../errors/catalog.ts';
import type { RouteCall } from '../route-table.ts';

/**
 * GET /metrics (docs/operations/observability.md "Metrics"): the master key or an admin key, unless `metrics.public` opens it
 * to a scraper without one; a gateway with metrics off has no such route.
 */
export async function handleMetrics({ req, res, ctx }: RouteCall): Promise<void> {
  const { metrics } = ctx;
  if (!metrics) throw errors.routeNotFound('GET', '/metrics');
  if (!ctx.config.metrics.public) {
    const caller = await ctx.authenticateAdmin(req);
    if (!caller.admin) throw errors.adminRequired();
  }
  let text: string;
  try {
    text = await metrics.scrape();
  } catch (err) {
    // A worker could not gather the other workers' metrics (worker-metrics.ts): no partial sums.
    throw errors.metricsUnavailable((err as Error).message);
  }
  res.writeHead(200, { 'Content-Type': metrics.registry.contentType, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
