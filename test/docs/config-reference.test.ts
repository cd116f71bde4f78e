import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CONFIG_REFERENCE_PATH, configReference } from '../../scripts/docs/config-reference.ts';

describe(CONFIG_REFERENCE_PATH, () => {
  it('is what the config schema generates (run `npm run docs:config` after changing src/config/schema.ts)', () => {
    const committed = readFileSync(new URL(`../../${CONFIG_REFERENCE_PATH}`, import.meta.url), 'utf8');
    assert.ok(
      committed === configReference(),
      `${CONFIG_REFERENCE_PATH} and src/config/schema.ts have drifted apart: run \`npm run docs:config\` and commit the page`,
    );
  });
});
