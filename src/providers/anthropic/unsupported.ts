import { errors } from '../../errors/catalog.ts';

/**
 * What happens to a request parameter Anthropic cannot honour: a 400 naming it, or, when the
 * provider's config says `drop_params: true`, nothing (the caller leaves it out).
 */
export type Unsupported = (param: string, message: string) => void;

export function unsupportedParams(dropParams: boolean): Unsupported {
  return (param, message) => {
    if (!dropParams) throw errors.invalidRequest(message, param);
  };
}
