// clients/typescript/schema.ts is exactly what openapi-typescript makes of the document the API
// serves at /v3/openapi.json, a problem's code typed as the catalogue's codes: an API change
// committed without `npm run client` fails here, and so in CI. The comparison is also shown to
// fail on a changed document, since a check that cannot fail proves nothing.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, describe, test } from 'node:test';
import { API_VERSION } from '../../clients/typescript/client.ts';
import { fetchServedDocument, generateClientSchema, SCHEMA_FILE } from '../../clients/typescript/generate.ts';
import { LATEST_API_VERSION } from '../../src/core/api-versions.ts';
import { ERRORS } from '../../src/core/errors.ts';

type OpenApiDocument = Awaited<ReturnType<typeof fetchServedDocument>>;

/** The first line where two texts differ, for a readable failure instead of a 3,000-line diff. */
function firstDifference(committed: string, generated: string): string | undefined {
  const a = committed.split('\n');
  const b = generated.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `line ${i + 1}: committed ${JSON.stringify(a[i])}, generated ${JSON.stringify(b[i])}`;
  }
  return undefined;
}

describe('the TypeScript client (clients/typescript/) is generated from the served OpenAPI document', () => {
  let served: OpenApiDocument;
  let committed: string;
  before(async () => {
    served = await fetchServedDocument();
    committed = readFileSync(SCHEMA_FILE, 'utf8');
  });

  test('the client speaks the latest API version', () => {
    assert.equal(API_VERSION, LATEST_API_VERSION, 'a new API version: move the client to it (clients/typescript/client.ts) and regenerate');
  });

  test('schema.ts is current: regenerated from /v3/openapi.json, it is unchanged', async () => {
    const difference = firstDifference(committed, await generateClientSchema(served));
    assert.equal(
      difference,
      undefined,
      `clients/typescript/schema.ts is out of date; run \`npm run client\` and commit it (${difference})`,
    );
  });

  test('every operation of the served document has its types, under its operationId', () => {
    const operationIds = Object.values(served.paths ?? {}).flatMap((item) =>
      Object.values(item as Record<string, { operationId?: string }>).flatMap((operation) => operation.operationId ?? []),
    );
    assert.ok(operationIds.length >= 15, `only ${operationIds.length} operations`);
    for (const id of operationIds) assert.match(committed, new RegExp(`^ {4}${id}: \\{$`, 'm'), id);
  });

  test("a problem's code is the union of the catalogue's codes, which the served document leaves an open string", () => {
    const code = /^ {12}code: (".*");$/m.exec(committed)?.[1];
    assert.ok(code, 'the Problem schema types its code');
    assert.deepEqual(
      code.split(' | ').map((literal) => JSON.parse(literal)),
      Object.keys(ERRORS).sort(),
    );
    const problem = served.components?.schemas?.Problem as { properties?: { code?: Record<string, unknown> } };
    assert.equal(problem.properties?.code?.type, 'string');
    assert.equal(problem.properties?.code?.enum, undefined, 'a client built before a code was added must still accept it');
  });

  test('the comparison fails when the document changes: a new field of Order changes the schema', async () => {
    const changed = structuredClone(served);
    const order = changed.components?.schemas?.Order as { properties: Record<string, unknown> };
    order.properties.giftMessage = { type: 'string', description: 'A field the API does not have.' };
    const difference = firstDifference(committed, await generateClientSchema(changed));
    assert.ok(difference, 'a changed document must give a different schema');
    assert.match(difference, /giftMessage|A field the API does not have/);
  });
});
