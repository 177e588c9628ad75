// The guides (docs/webhooks.md and the migration guides) done as written, top to bottom, by a
// reader with a clone: against one `orderpay serve` started with the variables the guides' own
// start command sets (ORDERPAY_WEBHOOKS_ALLOW_PRIVATE for the webhook receiver), on a fresh seeded
// database (embedded, or PostgreSQL when TEST_DATABASE_URL is set). Every block of a guide runs, or
// is a file a later block runs (the webhook receiver, started in a terminal of its own), or shows
// what a block printed and is compared with it (ids and times aside).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cleanUpProcessesAndDatabases, DATABASE_LABEL, type Env } from '../cli/orderpay-process.ts';
import {
  type DocBlock,
  DOCS_RECEIVER_URL,
  DOCS_SERVER_URL,
  findServerVariables,
  findUncheckedBlocks,
  GUIDES,
  isRunBlock,
  readFencedBlocks,
} from './doc-blocks.ts';
import { type ReadersServer, runDocument, startReadersServer } from './run-document.ts';
import type { ShellSession } from './shell-session.ts';
import { DEMO_CUSTOMER_EMAILS, DEMO_PASSWORD } from '../../src/seed.ts';
import { signInWithForms } from '../helpers/oauth.ts';

// Ports 29830–29839 belong to this file.
const SERVER_URL = 'http://127.0.0.1:29830';
const RECEIVER_URL = 'http://127.0.0.1:29831';

const guides = GUIDES.map((file) => ({ file, blocks: readFencedBlocks(file) }));
const serverVariables: Env = Object.assign({}, ...guides.flatMap(({ blocks }) => blocks.map(findServerVariables)));

test('every block of the guides runs, or is a file a block runs, or shows what a block printed', () => {
  assert.deepEqual(
    guides.flatMap(({ blocks }) => findUncheckedBlocks(blocks)),
    [],
  );
  // The webhook guide starts orderpay so that it may deliver to the reader's machine; so does the test.
  assert.equal(serverVariables.ORDERPAY_WEBHOOKS_ALLOW_PRIVATE, 'true');
  const webhooks = guides.find(({ file }) => file === 'docs/webhooks.md')!.blocks;
  assert.ok(
    webhooks.some((block) => block.terminal !== undefined && isRunBlock(block)),
    'the webhook guide runs a receiver',
  );
  assert.ok(
    webhooks.some((block) => block.output?.terminal !== undefined),
    'and shows what the receiver prints',
  );
});

describe(`the guides, as written, against orderpay serve (${DATABASE_LABEL})`, () => {
  let server: ReadersServer | undefined;
  before(async () => {
    server = await startReadersServer(SERVER_URL, serverVariables);
  });
  after(() => server?.close() ?? cleanUpProcessesAndDatabases());

  const addresses = new Map([
    [DOCS_SERVER_URL, SERVER_URL],
    [DOCS_RECEIVER_URL, RECEIVER_URL],
  ]);
  for (const { file, blocks } of guides) {
    test(`${file}: every block, in order`, (t) =>
      runDocument(t, blocks, { env: server!.env, addresses, readersStep: signInAtPushedRequest }));
  }
});

/**
 * What docs/fapi.md asks the reader to do by hand after the block that pushes the authorization
 * request: open the URL it printed, sign in as the demo customer, allow, and copy the address the
 * browser is sent to into CALLBACK. Done here with the login and consent forms, as a browser would.
 */
async function signInAtPushedRequest(session: ShellSession, block: DocBlock, stdout: string): Promise<void> {
  if (!block.code.includes('fapi-start.mjs')) return;
  const authorizationUrl = stdout.trim().split('\n').at(-1)!;
  assert.ok(
    authorizationUrl.startsWith(`${SERVER_URL}/oauth/authorize?request_uri=`),
    `${block.file}:${block.line} printed ${authorizationUrl}`,
  );
  const callback = await signInWithForms({ baseUrl: SERVER_URL }, authorizationUrl, DEMO_CUSTOMER_EMAILS[0]!, DEMO_PASSWORD);
  assert.equal(`${callback.origin}${callback.pathname}`, 'https://budget.example/callback');
  const set = await session.run(`CALLBACK='${callback.href}'`);
  assert.equal(set.status, 0);
}
