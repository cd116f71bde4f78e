import type { CanonicalFunctionTool, CanonicalRequest, CanonicalTool } from '../protocol/canonical/request.ts';

/** A `function` tool (the others are hosted tools some OpenAI-compatible upstreams run themselves). */
export const isFunctionTool = (tool: CanonicalTool): tool is CanonicalFunctionTool => 'function' in tool;

/**
 * The request's function tools, for a native provider. A hosted tool (any other `type`, e.g.
 * OpenRouter's `openrouter:web_search`) is run by an OpenAI-compatible upstream itself; a native
 * provider has no such tool, so each one is reported as unsupported (a 400 naming `tools[i]`, or
 * left out under drop_params).
 */
export function functionTools(
  request: CanonicalRequest,
  provider: string,
  unsupported: (param: string, why: string) => void,
): CanonicalFunctionTool[] {
  const out: CanonicalFunctionTool[] = [];
  request.tools?.forEach((tool, i) => {
    if (isFunctionTool(tool)) out.push(tool);
    else
      unsupported(`tools[${i}]`, `${provider} takes only function tools, and \`${tool.type}\` is a tool run by another upstream`);
  });
  return out;
}
