import { registerHooks } from 'node:module';

/**
 * Records every module this process loads from the call on, imported or required, and says
 * whether one whose URL contains `part` was loaded. A test of what a gateway leaves unloaded
 * calls it first and imports the gateway after (each test file runs in a process of its own).
 */
export function recordModuleLoads(): (part: string) => boolean {
  const loads: string[] = [];
  registerHooks({
    load(url, context, next) {
      loads.push(url);
      return next(url, context);
    },
  });
  return (part) => loads.some((url) => url.includes(part));
}
