// The rules the docs tests hold the docs' blocks to (docs-shell.test.ts, docs-guides.test.ts), on
// blocks made here: each refuses what it is there to refuse, so that a guide cannot drift into
// blocks that nothing runs or checks without a test failing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type DocBlock,
  findMarkingProblems,
  findSequenceProblems,
  findServerVariables,
  findUncheckedBlocks,
  findUnknownAddresses,
  findWrittenFiles,
} from './doc-blocks.ts';

let line = 0;
function block(language: string, code: string, marker: Partial<DocBlock> = {}): DocBlock {
  const fields = { notRun: undefined, output: undefined, fileName: undefined, terminal: undefined };
  return { file: 'docs/guide.md', line: ++line, section: '', language, code, ...fields, ...marker };
}
const output = (terminal?: string, eventually = false) => ({ output: { terminal, eventually } });

describe("a guide's blocks", () => {
  const read = block('sh', 'curl -fsS "$API/orders"');
  const write = block('sh', `curl -fsS "$API/orders" -d '{}'`);
  const shown = block('json', '{}', output());
  const receiver = block('js', 'listen()', { fileName: 'receiver.mjs' });
  const start = block('sh', 'node receiver.mjs', { terminal: 'receiver' });
  const printed = block('text', 'Listening', output('receiver'));

  test('in a sound order: outputs after what prints them, files before what runs them', () => {
    assert.deepEqual(findSequenceProblems([read, shown, receiver, start, printed, write, block('json', '{}', output())]), []);
    assert.deepEqual(findSequenceProblems([read, block('json', '{}', output(undefined, true))]), []);
  });

  test('an output of nothing, a second output of one block, or one of a terminal not started', () => {
    assert.equal(findSequenceProblems([shown]).length, 1);
    assert.equal(findSequenceProblems([read, shown, shown]).length, 1);
    assert.equal(findSequenceProblems([printed, receiver, start]).length, 1);
  });

  test('a block that writes is never run again to wait for its output; a file must be run by a later block', () => {
    assert.match(findSequenceProblems([write, block('json', '{}', output(undefined, true))])[0]!, /but that block writes/);
    assert.match(findSequenceProblems([start, receiver])[0]!, /receiver\.mjs is run by no block after it/);
  });

  test('every block runs, or is an output or a file: an example nothing checks is refused', () => {
    assert.deepEqual(findUncheckedBlocks([read, shown, receiver, start, printed]), []);
    assert.equal(findUncheckedBlocks([block('http', 'POST /orders')]).length, 1);
    assert.equal(findUncheckedBlocks([block('json', '{ "id": 1 }')]).length, 1);
  });

  test('an output or a file is not shell, and only shell runs in a terminal of its own', () => {
    assert.equal(findMarkingProblems(block('sh', 'echo', output())).length, 1);
    assert.equal(findMarkingProblems(block('sh', 'echo', { fileName: 'x.sh' })).length, 1);
    assert.equal(findMarkingProblems(block('js', 'listen()', { terminal: 'receiver' })).length, 1);
    assert.deepEqual([receiver, shown, start].flatMap(findMarkingProblems), []);
  });
});

test('the addresses the docs name: orderpay and the receiver by default, no other local server', () => {
  const receiverFile = block('js', "new URL('http://127.0.0.1:4000/orderpay')", { fileName: 'receiver.mjs' });
  assert.deepEqual(findUnknownAddresses(receiverFile), []);
  assert.deepEqual(findUnknownAddresses(block('sh', 'curl -fsS http://127.0.0.1:3000/v3/orders')), []);
  assert.equal(findUnknownAddresses(block('sh', 'curl -fsS http://localhost:8080/')).length, 1);
});

test('what a start command sets is what the test starts orderpay with; what blocks write, it removes', () => {
  const startCommand = block('sh', 'ORDERPAY_WEBHOOKS_ALLOW_PRIVATE=true LOG_LEVEL=debug npm start', { notRun: 'serves' });
  assert.deepEqual(findServerVariables(startCommand), { ORDERPAY_WEBHOOKS_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'debug' });
  assert.deepEqual(findServerVariables(block('sh', 'A=1 npm test', { notRun: 'the suite' })), {});
  const env = block('sh', `echo "$SECRET" > receiver.env\ncurl -fsS -o /dev/null "$API"`);
  assert.deepEqual(findWrittenFiles([block('js', '', { fileName: 'receiver.mjs' }), env]), ['receiver.mjs', 'receiver.env']);
});
