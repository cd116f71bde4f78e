import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors } from '../errors/catalog.ts';
import type { Caller } from '../admission/admission.ts';
import type { GatewayContext } from './gateway-context.ts';

export interface RouteCall {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  ctx: GatewayContext;
  /** The decoded path parameter of a prefix route. */
  param: string;
  /** The decoded `{name}` segments of a template route. */
  params: Record<string, string>;
  search: URLSearchParams;
  /** Who called a `key` or `admin` route (authenticated before the handler); null on the others. */
  caller: Caller | null;
}

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /**
   * An exact path; (with `param`) a prefix ending in `/` followed by one parameter; or a template
   * whose `{name}` segments each match one non-empty segment (`/{project}/{endpoint}/v1/responses`).
   */
  path: string;
  /** Names the path parameter (in errors) of a prefix route. */
  param?: string;
  /**
   * `model`: a model request; its lifecycle authenticates it, so that a refusal is recorded like
   * any other. `key`: the caller's key is checked before the handler. `admin`: the same, and the
   * key must be the master key or an admin key (else 403). `open`: no key needed.
   */
  auth: 'model' | 'key' | 'admin' | 'open';
  /**
   * The answers carry a caller's data (the request log, the console's API): `Cache-Control:
   * no-store`, errors included, so that neither a browser nor a proxy keeps them.
   */
  noStore?: true;
  /**
   * The query parameters the route reads: any other is a 400 naming it (refuse-unknown-query.ts),
   * after the key is checked. Unset: the query is not looked at (model routes, whose SDKs add
   * their own, such as Anthropic's `?beta=true`; health probes; the console's files).
   */
  query?: readonly string[];
  handle(call: RouteCall): Promise<void> | void;
}

export interface RouteMatch {
  route: Route;
  /** The raw (still percent-encoded) parameter of a prefix route, '' otherwise. */
  rawParam: string;
  /** The raw segments of a template route by name, {} otherwise. */
  rawParams: Record<string, string>;
}

/**
 * A route table arranged for lookup: exact paths by path (the model routes, nearly every request),
 * then templates pre-split into segments, then prefixes. Scanning the table on every request,
 * testing each path and splitting each template, cost 0.76-0.89 us a match of
 * `/v1/chat/completions` in a loop of 200k (37 routes), and 3.0 us of a unary request's CPU in a
 * `perf` profile of `sluice serve` (cold caches); a Map lookup is a hash of the path.
 */
export interface RouteIndex {
  exact: Map<string, Route[]>;
  templates: { route: Route; segments: string[] }[];
  prefixes: Route[];
}

/** Once per gateway: the table in lookup order, each kind in table order. */
export function indexRoutes(table: readonly Route[]): RouteIndex {
  const index: RouteIndex = { exact: new Map(), templates: [], prefixes: [] };
  for (const route of table) {
    if (route.param) index.prefixes.push(route);
    else if (route.path.includes('{')) index.templates.push({ route, segments: route.path.split('/') });
    else index.exact.set(route.path, [...(index.exact.get(route.path) ?? []), route]);
  }
  return index;
}

/**
 * Finds the route of a method and path: 404 when no route has the path, 405 when routes have it
 * but not with this method. Exact paths first, then templates, then prefixes.
 */
export function matchRoute(index: RouteIndex, method: string, path: string): RouteMatch {
  const fits = (route: Route) => route.method === method || (method === 'HEAD' && route.method === 'GET');
  const exact = index.exact.get(path);
  for (const route of exact ?? []) if (fits(route)) return { route, rawParam: '', rawParams: {} };
  let onPath = exact !== undefined;
  if (index.templates.length > 0) {
    const got = path.split('/');
    for (const { route, segments } of index.templates) {
      const rawParams = matchTemplate(segments, got);
      if (!rawParams) continue;
      if (fits(route)) return { route, rawParam: '', rawParams };
      onPath = true;
    }
  }
  for (const route of index.prefixes) {
    if (!path.startsWith(route.path) || path.length === route.path.length) continue;
    if (fits(route)) return { route, rawParam: path.slice(route.path.length), rawParams: {} };
    onPath = true;
  }
  throw onPath ? errors.methodNotAllowed(method, path) : errors.routeNotFound(method, path);
}

/** The `{name}` segments of a path (split at `/`) when it has the template's shape; undefined otherwise. */
function matchTemplate(want: readonly string[], got: readonly string[]): Record<string, string> | undefined {
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const segment = want[i];
    if (segment.startsWith('{') && segment.endsWith('}')) {
      if (!got[i]) return undefined;
      params[segment.slice(1, -1)] = got[i];
    } else if (segment !== got[i]) {
      return undefined;
    }
  }
  return params;
}

/** A percent-encoded path parameter, decoded; malformed encoding is the client's 400, naming it. */
export function decodePathParam(raw: string, name: string): string {
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    throw errors.invalidRequest(`The ${name} in the path is not valid percent-encoding.`, name);
  }
  // A NUL cannot be in any id sluice issues, and PostgreSQL refuses it in text.
  if (value.includes('\0')) throw errors.invalidRequest(`The ${name} in the path contains a NUL byte.`, name);
  return value;
}
