import type { Caller } from '../../admission/admission.ts';
import { readableProjects, withinProjects } from '../../governance/keys/project-scope.ts';
import { sendJson } from '../../protocol/http/send-json.ts';
import { openLedgerStore, readStore } from '../../store/read-store.ts';
import { readReport } from '../../store/spend-report.ts';
import type { RouteCall } from '../route-table.ts';
import { flushBriefly } from './requests.ts';
import { spendCsv } from './spend-csv.ts';
import { reportJson, type SpendNames } from './spend-json.ts';
import { parseSpendQuery } from './spend-query.ts';

/**
 * GET /v1/spend?group_by=&period=&from=&to=: the spend of the filtered view, its series over
 * time, and each group's, from the spend rollups (store/spend-tables.ts), never the ledger's rows.
 * A project key sees its project's spend only, a member its projects' (their projects win over
 * any other project_id asked for), as in the request log.
 */
export async function handleSpend({ req, res, ctx, search, requestId, caller }: RouteCall): Promise<void> {
  const store = openLedgerStore(ctx);
  const query = parseSpendQuery(search, req.headers.accept, Date.now());
  query.filter = withinProjects(query.filter, readableProjects(caller));
  // Records still buffered belong in the answer (a report right after a burst of requests), as in the request log.
  await flushBriefly(ctx, ctx.config.store.query_timeout_ms / 2);
  const [report, names] = await Promise.all([
    readReport((rollup, byTag, filter, keep) => readStore(ctx, store.spend(rollup, byTag, filter, keep)), query),
    namesOf(ctx, caller),
  ]);
  const headers = { 'X-Request-ID': requestId, 'Cache-Control': 'no-store' };
  if (query.format === 'csv') {
    const body = spendCsv(report, query.groupBy, names);
    res.writeHead(200, {
      ...headers,
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="sluice-spend-${query.period}.csv"`,
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
    return;
  }
  sendJson(res, 200, reportJson(report, query, names), headers);
}

/** The names of the projects and keys the caller may see (a project key: its own project's). */
async function namesOf(ctx: RouteCall['ctx'], caller: Caller | null): Promise<SpendNames> {
  const visible = readableProjects(caller);
  const sees = (projectId: string) => visible === undefined || visible.includes(projectId);
  const [projects, keys] = await ctx.governance.withStore((s) => Promise.all([s.listProjects(), s.listKeys()]));
  return {
    projects: new Map(projects.filter((p) => sees(p.id)).map((p) => [p.id, p.name])),
    keys: new Map(keys.filter((k) => sees(k.projectId)).map((k) => [k.id, k.name])),
  };
}
