// A document's blocks, done as a reader does them, in order: shell blocks run in one terminal (a
// command that runs until stopped in a terminal of its own), files saved where they are run, and
// every output shown compared with what was printed. The docs' addresses become the test's servers'
// on the way in, and the servers' become the docs' again on the way out.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { cleanUpProcessesAndDatabases, createTargetDatabase, inheritedEnv, ROOT, startServe, type Env } from '../cli/orderpay-process.ts';
import { blockName, findWrittenFiles, isRunBlock, type DocBlock } from './doc-blocks.ts';
import { compareOutput, compareWholeOutput, type OutputComparison } from './output-match.ts';
import { ShellSession } from './shell-session.ts';

/** How long a terminal's output may take to show what a block shows (a webhook is retried after 5 s). */
const OUTPUT_TIMEOUT_MS = 30_000;

export interface DocumentRun {
  /** The terminals' environment: what a reader's shell holds beside the one running orderpay. */
  env: Env;
  /** Each address the docs name (DOCS_SERVER_URL, …) and the one the test listens on instead. */
  addresses: ReadonlyMap<string, string>;
  /** What the reader does by hand after a block (signing in at a printed URL), done by the test. */
  readersStep?: (session: ShellSession, block: DocBlock, stdout: string) => Promise<void>;
}

export interface ReadersServer {
  env: Env;
  close(): Promise<void>;
}

/**
 * What a reader has before the first block: `orderpay serve` at `url` (started with `variables`,
 * as the docs' `npm start` sets them) on a fresh seeded database, embedded or on TEST_DATABASE_URL,
 * and the environment of the terminals beside it: the same database and port. `close` for after().
 */
export async function startReadersServer(url: string, variables: Env = {}): Promise<ReadersServer> {
  const target = await createTargetDatabase();
  const env = { ...inheritedEnv(), ...target.env, PORT: new URL(url).port, LOG_LEVEL: 'warn' };
  const server = await startServe({ ...env, ...variables });
  assert.equal(server.listening.publicUrl, url);
  return {
    env,
    async close() {
      await server.stop();
      await cleanUpProcessesAndDatabases();
    },
  };
}

interface Terminal {
  session: ShellSession;
  /** How much of its output (in the docs' addresses) earlier output blocks have shown. */
  shown: number;
}

export async function runDocument(t: TestContext, blocks: DocBlock[], run: DocumentRun): Promise<void> {
  const toTest = (text: string) => [...run.addresses].reduce((out, [docs, test]) => out.replaceAll(docs, test), text);
  const toDocs = (text: string) => [...run.addresses].reduce((out, [docs, test]) => out.replaceAll(test, docs), text);
  const files = findWrittenFiles(blocks);
  // The reader's own files are theirs: a test that would overwrite one stops instead.
  const present = files.filter((name) => existsSync(path.join(ROOT, name)));
  assert.deepEqual(present, [], `the blocks write these files in ${ROOT}, which holds them already`);

  const main = await ShellSession.open(ROOT, run.env);
  const terminals = new Map<string, Terminal>();
  let last: { block: DocBlock; stdout: string } | undefined;
  try {
    for (const block of blocks) {
      if (block.fileName !== undefined) {
        await writeFile(path.join(ROOT, block.fileName), toTest(block.code));
      } else if (block.output?.terminal !== undefined) {
        const terminal = terminals.get(block.output.terminal);
        assert.ok(terminal, `${blockName(block)}: nothing runs in the terminal ${block.output.terminal}`);
        terminal.shown += await awaitOutput(block, terminal, toDocs);
      } else if (block.output !== undefined) {
        assert.ok(last, `${blockName(block)}: no block ran before it`);
        await checkOutput(main, block, last, toTest, toDocs);
      } else if (block.terminal !== undefined && isRunBlock(block)) {
        // Started again: the reader stops the one running first (Ctrl-C).
        await terminals.get(block.terminal)?.session.stop();
        const session = await ShellSession.open(ROOT, run.env);
        terminals.set(block.terminal, { session, shown: 0 });
        await session.start(toTest(block.code));
      } else if (isRunBlock(block)) {
        const ran = await main.run(toTest(block.code));
        assert.equal(ran.status, 0, `${blockName(block)} failed (exit ${ran.status}):\n${block.code}\n${printed(ran)}`);
        last = { block, stdout: ran.stdout };
        await run.readersStep?.(main, block, ran.stdout);
      } else {
        continue;
      }
      t.diagnostic(`did ${blockName(block)}`);
    }
  } finally {
    await Promise.all([...terminals.values()].map(({ session }) => session.stop()));
    await main.close();
    await Promise.all(files.map((name) => rm(path.join(ROOT, name), { force: true })));
  }
}

const printed = ({ stdout, stderr }: { stdout: string; stderr: string }) => `--- stdout\n${stdout}\n--- stderr\n${stderr}`;

/**
 * Compares the output a block shows with what the last block printed. An output shown `eventually`
 * is of a read whose answer settles a moment after what the reader saw (a webhook delivery is
 * recorded once the receiver has answered): the block is run again until it prints what is shown.
 */
async function checkOutput(
  main: ShellSession,
  block: DocBlock,
  last: { block: DocBlock; stdout: string },
  toTest: (text: string) => string,
  toDocs: (text: string) => string,
): Promise<void> {
  let stdout = last.stdout;
  let problems = compareWholeOutput(block, toDocs(stdout));
  const deadline = performance.now() + OUTPUT_TIMEOUT_MS;
  while (problems.length > 0 && block.output!.eventually && performance.now() < deadline) {
    const again = await main.run(toTest(last.block.code));
    assert.equal(again.status, 0, `${blockName(last.block)} failed when run again (exit ${again.status}):\n${printed(again)}`);
    stdout = again.stdout;
    problems = compareWholeOutput(block, toDocs(stdout));
  }
  assert.deepEqual(
    problems,
    [],
    `${blockName(block)} is not what ${blockName(last.block)} printed:\n${block.code}\n--- printed\n${stdout}`,
  );
}

/** Waits until a terminal has printed what an output block shows, and says how much of its output that was. */
async function awaitOutput(block: DocBlock, terminal: Terminal, toDocs: (text: string) => string): Promise<number> {
  let comparison = { kind: 'incomplete' } as OutputComparison;
  const rest = (stdout: string) => toDocs(stdout).slice(terminal.shown);
  await terminal.session.waitForOutput((stdout) => {
    comparison = compareOutput(block, rest(stdout));
    return comparison.kind !== 'incomplete';
  }, OUTPUT_TIMEOUT_MS);
  const { stdout, stderr } = terminal.session.output;
  const message = `${blockName(block)}: the terminal ${block.output!.terminal} printed\n${printed({ stdout: rest(stdout), stderr })}`;
  assert.notEqual(comparison.kind, 'incomplete', `${message}\n(not all of what is shown, within ${OUTPUT_TIMEOUT_MS} ms)`);
  assert.deepEqual(comparison.kind === 'differs' ? comparison.problems : [], [], message);
  return comparison.kind === 'matched' ? comparison.length : 0;
}
