// Generates schema.ts, the client's types, from the OpenAPI document orderpay serves at
// /v<API_VERSION>/openapi.json (`npm run client`). The document comes from the app itself, built
// without listening over an in-memory database, so no server has to run; the test that keeps
// schema.ts current (test/contract/typescript-client.test.ts) regenerates it the same way.
// A problem's `code` is typed as the catalogue's codes, which the document names only in prose
// (docs/decisions/0114-typescript-client-package.md).
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { ERRORS } from '../../src/core/errors.ts';
import { createDatabase } from '../../src/db/create-database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { API_VERSION } from './client.ts';

export const SCHEMA_FILE = new URL('./schema.ts', import.meta.url);

/** The document as the API serves it; the configuration's defaults, so nothing local leaks into it. */
export async function fetchServedDocument(): Promise<OpenAPI3> {
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATA_DIR: 'memory://', ORDERPAY_SERVERS: 'resource' });
  const db = await createDatabase(config);
  try {
    await migrate(db);
    const app = await buildApp(config, db, { logger: false });
    try {
      const response = await app.inject({ method: 'GET', url: `/v${API_VERSION}/openapi.json` });
      if (response.statusCode !== 200) throw new Error(`/v${API_VERSION}/openapi.json answered ${response.statusCode}`);
      return response.json<OpenAPI3>();
    } finally {
      await app.close();
    }
  } finally {
    await db.close();
  }
}

/**
 * The document with the Problem schema's `code` listing the catalogue's codes (src/core/errors.ts),
 * so that openapi-typescript types it as their union and a misspelt code fails to compile. The
 * served document keeps it an open string: a client built before a code was added still accepts it.
 */
function withCatalogueCodes(document: OpenAPI3): OpenAPI3 {
  const typed = structuredClone(document);
  const problem = typed.components?.schemas?.Problem as { properties?: Record<string, object> } | undefined;
  const code = problem?.properties?.code;
  if (!code) throw new Error('the document has no Problem schema with a code');
  problem.properties!.code = { ...code, enum: Object.keys(ERRORS).sort() };
  return typed;
}

/** schema.ts as it must read: openapi-typescript's output for the served document, codes typed. */
export async function generateClientSchema(document?: OpenAPI3): Promise<string> {
  const ast = await openapiTS(withCatalogueCodes(document ?? (await fetchServedDocument())), { silent: true });
  return `${COMMENT_HEADER}${astToString(ast)}`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(SCHEMA_FILE, await generateClientSchema());
  console.log(`wrote ${SCHEMA_FILE.pathname}`);
}
