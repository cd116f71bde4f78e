import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { type JsonSchema, renderConfigReference, typeOf } from './render-config-reference.ts';

const jsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;

describe('typeOf', () => {
  it('says the type and its bounds, leaving out the safe-integer range zod puts on every integer', () => {
    assert.equal(typeOf(jsonSchema(z.number().int().positive())), 'integer, > 0');
    assert.equal(typeOf(jsonSchema(z.number().int())), 'integer');
    assert.equal(typeOf(jsonSchema(z.number().min(0).max(2))), 'number, ≥ 0, ≤ 2');
    assert.equal(typeOf(jsonSchema(z.enum(['a', 'b']))), '`"a"`, `"b"`');
    assert.equal(typeOf(jsonSchema(z.array(z.string()))), 'list of string');
    assert.equal(typeOf(jsonSchema(z.record(z.string(), z.string()))), 'map of name to string');
  });

  it('escapes a | inside a pattern, which would split the table cell', () => {
    assert.equal(typeOf(jsonSchema(z.string().regex(/^a$|^b$/))), 'string, matching `^a$\\|^b$`');
  });
});

describe('renderConfigReference', () => {
  it('gives each object a table, a record its <name> entry with the record description, and says what is required', () => {
    const page = renderConfigReference(
      jsonSchema(
        z.strictObject({
          top: z.string().optional().describe('A plain key.'),
          section: z
            .strictObject({ port: z.number().int().default(8080).describe('The port.') })
            .prefault({})
            .describe('A section.'),
          things: z
            .record(z.string(), z.strictObject({ need: z.string().describe('Needed.') }))
            .default({})
            .describe('Things by name.'),
        }),
      ),
    );
    assert.match(
      page,
      /## Top level\n\n\| key \| type \| default \| description \|\n\|---\|---\|---\|---\|\n\| `top` \| string \| {2}\| A plain key\. \|/,
    );
    assert.match(page, /## `section`\n\nA section\.\n\n[^#]*\| `port` \| integer \| `8080` \| The port\. \|/);
    assert.match(page, /## `things\.<name>`\n\nThings by name\.\n\n[^#]*\| `need` \| string \| required \| Needed\. \|/);
  });
});
