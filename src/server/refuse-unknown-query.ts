import { closestMatch } from '../config/edit-distance.ts';
import { errors } from '../errors/catalog.ts';

/**
 * Refuses query parameters a route does not read (`known`): a filter the API ignores answers for
 * everything, silently (`GET /v1/requests?project=team-a` listed every project's requests; the
 * parameter is `project_id`). A 400 in the surface's error shape, its `param` the first unknown
 * name, its message every one of them with the nearest known name.
 */
export function refuseUnknownQuery(search: URLSearchParams, known: readonly string[]): void {
  const unknown = [...new Set(search.keys())].filter((name) => !known.includes(name));
  if (unknown.length === 0) return;
  const named = unknown.map((name) => {
    const shown = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
    const near = closestMatch(name, known);
    return near ? `${shown} (did you mean "${near}"?)` : shown;
  });
  const takes = known.length ? `it takes ${known.join(', ')}` : 'it takes none';
  throw errors.invalidRequest(
    `Unknown query parameter${unknown.length > 1 ? 's' : ''} ${named.join(', ')}: ${takes}.`,
    unknown[0],
  );
}
