// Every shell block of README.md and docs/*.md, run as a reader would paste it: in document order,
// one terminal per document, against a started `orderpay serve` on a fresh, seeded database
// (embedded, or PostgreSQL when TEST_DATABASE_URL is set). The README's five-minute walkthrough
// runs twice, in a new terminal the second time: a doc that works once only fails here.
import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import { DEMO_CUSTOMER_EMAILS, DEMO_PASSWORD, DEMO_REDIRECT_URI } from '../../src/seed.ts';
import { signInWithForms } from '../helpers/oauth.ts';
import {
  cleanUpProcessesAndDatabases,
  createTargetDatabase,
  DATABASE_LABEL,
  inheritedEnv,
  ROOT,
  startServe,
  type Env,
  type ServeProcess,
} from '../cli/orderpay-process.ts';
import {
  blockName,
  documentedFiles,
  findMarkingProblems,
  findUncheckedCommands,
  isRunBlock,
  readFencedBlocks,
  type DocBlock,
} from './doc-blocks.ts';
import { ShellSession } from './shell-session.ts';

// Ports 29300–29309 belong to this file.
const PORT = 29300;
const SERVER_URL = `http://127.0.0.1:${PORT}`;
/** The address the docs use, orderpay's default: copy-paste works against a default `npm start`. */
const DOCS_URL = 'http://127.0.0.1:3000';
/** Local addresses a run block may name: the server (mapped to the test's) and the demo client's redirect URI. */
const LOCAL_ADDRESS = /\b(?:localhost|127\.0\.0\.1|\[::1\]|0\.0\.0\.0):\d+/g;
const ALLOWED_ADDRESSES = new Set([new URL(DOCS_URL).host, new URL(DEMO_REDIRECT_URI).host]);
/** The section that must run twice in a row. */
const WALKTHROUGH = { file: 'README.md', section: 'The API in five minutes' };

const allBlocks = documentedFiles().flatMap(readFencedBlocks);
const runBlocks = allBlocks.filter(isRunBlock);

test('every shell block in README.md and docs/ is run here, or marked with why it cannot be', (t) => {
  const problems = allBlocks.flatMap(findMarkingProblems);
  for (const block of runBlocks) {
    problems.push(...findUncheckedCommands(block));
    for (const [address] of block.code.matchAll(LOCAL_ADDRESS)) {
      if (!ALLOWED_ADDRESSES.has(address)) problems.push(`${blockName(block)}: names ${address}; the docs' server is ${DOCS_URL}`);
    }
  }
  assert.deepEqual(problems, []);
  for (const block of allBlocks.filter((b) => b.notRun !== undefined)) t.diagnostic(`not run: ${blockName(block)}: ${block.notRun}`);
  // The walkthrough is there to be run: a refactoring of the README must not leave it unrun.
  assert.ok(runBlocks.some((b) => b.file === WALKTHROUGH.file && b.section === WALKTHROUGH.section));
});

describe(`the docs' shell blocks against orderpay serve (${DATABASE_LABEL})`, () => {
  let server: ServeProcess;
  let env: Env;
  before(async () => {
    const target = await createTargetDatabase();
    // What a reader's terminal holds beside the one running `npm start`: the same configuration.
    env = { ...inheritedEnv(), ...target.env, PORT: String(PORT), LOG_LEVEL: 'warn' };
    server = await startServe(env);
    assert.equal(server.listening.publicUrl, SERVER_URL);
  });
  after(async () => {
    await server?.stop();
    await cleanUpProcessesAndDatabases();
  });

  for (const file of documentedFiles()) {
    const blocks = runBlocks.filter((b) => b.file === file);
    if (blocks.length === 0) continue;
    test(`${file}: ${blocks.length} shell block(s), in order, in one terminal`, (t) => runInOneTerminal(t, env, blocks));
  }

  test(`${WALKTHROUGH.file} "${WALKTHROUGH.section}" runs again, in a new terminal, without an edit`, (t) =>
    runInOneTerminal(
      t,
      env,
      runBlocks.filter((b) => b.file === WALKTHROUGH.file && b.section === WALKTHROUGH.section),
    ));
});

async function runInOneTerminal(t: TestContext, env: Env, blocks: DocBlock[]): Promise<void> {
  const session = await ShellSession.open(ROOT, env);
  try {
    for (const block of blocks) {
      const run = await session.run(block.code.replaceAll(DOCS_URL, SERVER_URL));
      const output = `--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
      assert.equal(run.status, 0, `${blockName(block)} failed (exit ${run.status}):\n${block.code}\n${output}`);
      t.diagnostic(`ran ${blockName(block)}`);
      await doReadersStep(session, block, run.stdout);
    }
  } finally {
    await session.close();
  }
}

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
