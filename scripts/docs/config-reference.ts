import { writeFileSync } from 'node:fs';
import { z } from 'zod';
import { configSchema } from '../../src/config/schema.ts';
import { type JsonSchema, renderConfigReference } from './render-config-reference.ts';

/** The reference page as the schema gives it now (test/docs/config-reference.test.ts compares it with the committed page). */
export function configReference(): string {
  // The input side: what a config file may say (defaults are optional there). Transforms and
  // refinements have no JSON Schema; their keys show with the type they take.
  return renderConfigReference(z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema);
}

export const CONFIG_REFERENCE_PATH = 'docs/reference/configuration.md';

// `npm run docs:config`: write the page.
if (import.meta.main) {
  writeFileSync(new URL(`../../${CONFIG_REFERENCE_PATH}`, import.meta.url), configReference());
  console.log(`${CONFIG_REFERENCE_PATH} written`);
}
