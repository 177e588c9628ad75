// Every shell block of README.md and docs/*.md, run as a reader would paste it: in document order,
// one terminal per document, against a started `orderpay serve` on a fresh, seeded database
// (embedded, or PostgreSQL when TEST_DATABASE_URL is set). The README's five-minute walkthrough
// runs twice, in a new terminal the second time: a doc that works once only fails here. The guides
// run in docs-guides.test.ts; how every document marks its blocks is checked here.
import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import { DEMO_CUSTOMER_EMAILS, DEMO_PASSWORD, DEMO_REDIRECT_URI } from '../../src/seed.ts';
import { signInWithForms } from '../helpers/oauth.ts';
import { cleanUpProcessesAndDatabases, DATABASE_LABEL, type Env } from '../cli/orderpay-process.ts';
import {
  blockName,
  DOCS_SERVER_URL,
  documentedFiles,
  findMarkingProblems,
  findSequenceProblems,
  findUncheckedCommands,
  findUnknownAddresses,
  GUIDES,
  isRunBlock,
  readFencedBlocks,
  type DocBlock,
} from './doc-blocks.ts';
import { type ReadersServer, runDocument, startReadersServer } from './run-document.ts';
import type { ShellSession } from './shell-session.ts';

// Ports 29300–29309 belong to this file.
const PORT = 29300;
const SERVER_URL = `http://127.0.0.1:${PORT}`;
/** The section that must run twice in a row. */
const WALKTHROUGH = { file: 'README.md', section: 'The API in five minutes' };

const documents = documentedFiles().map((file) => ({ file, blocks: readFencedBlocks(file) }));
const allBlocks = documents.flatMap(({ blocks }) => blocks);
const runBlocks = allBlocks.filter(isRunBlock);

test('every shell block in README.md and docs/ is run (here, or the guides in docs-guides.test.ts), or marked with why it cannot be', (t) => {
  const problems = allBlocks.flatMap((block) => [...findMarkingProblems(block), ...findUnknownAddresses(block)]);
  problems.push(...documents.flatMap(({ blocks }) => findSequenceProblems(blocks)));
  for (const block of runBlocks) problems.push(...findUncheckedCommands(block));
  assert.deepEqual(problems, []);
  for (const block of allBlocks.filter((b) => b.notRun !== undefined)) t.diagnostic(`not run: ${blockName(block)}: ${block.notRun}`);
  // The walkthrough is there to be run: a refactoring of the README must not leave it unrun.
  assert.ok(runBlocks.some((b) => b.file === WALKTHROUGH.file && b.section === WALKTHROUGH.section));
});

describe(`the docs' shell blocks against orderpay serve (${DATABASE_LABEL})`, () => {
  let server: ReadersServer | undefined;
  before(async () => {
    server = await startReadersServer(SERVER_URL);
  });
  after(() => server?.close() ?? cleanUpProcessesAndDatabases());

  for (const { file, blocks } of documents) {
    const count = blocks.filter(isRunBlock).length;
    if (count === 0 || GUIDES.includes(file)) continue;
    test(`${file}: ${count} shell block(s), in order, in one terminal`, (t) => runInOneTerminal(t, server!.env, blocks));
  }

  test(`${WALKTHROUGH.file} "${WALKTHROUGH.section}" runs again, in a new terminal, without an edit`, (t) =>
    runInOneTerminal(
      t,
      server!.env,
      allBlocks.filter((b) => b.file === WALKTHROUGH.file && b.section === WALKTHROUGH.section),
    ));
});

const runInOneTerminal = (t: TestContext, env: Env, blocks: DocBlock[]) =>
  runDocument(t, blocks, { env, addresses: new Map([[DOCS_SERVER_URL, SERVER_URL]]), readersStep: doReadersStep });

/**
 * Between two blocks, what the docs ask the reader to do by hand. The OAuth walkthrough prints an
 * authorization URL, then says: open it, sign in as alice@example.com, copy `code` from the
 * address the browser is sent to. Done here with the login and consent forms, as a browser would.
 */
async function doReadersStep(session: ShellSession, block: DocBlock, stdout: string): Promise<void> {
  if (!block.code.includes('/oauth/authorize?')) return;
  const authorizationUrl = stdout.trim().split('\n').at(-1)!;
  assert.ok(authorizationUrl.startsWith(`${SERVER_URL}/oauth/authorize?`), `${blockName(block)} printed ${authorizationUrl}`);
  const callback = await signInWithForms({ baseUrl: SERVER_URL }, authorizationUrl, DEMO_CUSTOMER_EMAILS[0]!, DEMO_PASSWORD);
  assert.equal(`${callback.origin}${callback.pathname}`, DEMO_REDIRECT_URI);
  assert.equal(callback.searchParams.get('state'), await session.read('STATE'), 'the state the reader checks');
  const code = callback.searchParams.get('code');
  assert.match(code ?? '', /^[\w-]+$/);
  const set = await session.run(`CODE='${code}'`);
  assert.equal(set.status, 0);
}
