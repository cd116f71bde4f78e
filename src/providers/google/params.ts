import { errors } from '../../errors/catalog.ts';

/** What to do with a request parameter Gemini cannot honour: a 400 naming it, or drop it. */
export interface ParamPolicy {
  /** Throws the 400, or returns when `drop_params` says to drop the parameter silently. */
  unsupported: (param: string, why: string) => void;
}

export function paramPolicy(provider: string, dropParams: boolean): ParamPolicy {
  return {
    unsupported(param, why) {
      if (dropParams) return;
      throw errors.invalidRequest(
        `${provider} cannot honour \`${param}\`: ${why}. Remove it, or set drop_params: true for this provider to have sluice drop it.`,
        param,
      );
    },
  };
}
