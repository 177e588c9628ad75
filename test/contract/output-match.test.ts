// What a doc's output block lets pass (docs-guides.test.ts compares every shown output with it): ids
// and times of their kind and what `…` elides, and nothing else. A comparison that let everything
// pass would make every output block of the guides a test that cannot fail.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compareOutput, compareWholeOutput } from './output-match.ts';

const json = (code: string) => ({ language: 'json', code });
const text = (code: string) => ({ language: 'text', code });

describe('a shown JSON output', () => {
  const shown = json(`{ "id": 3, "orderId": 7, "eventId": "evt_3q2M1oYkq8v5cX0pW3n8GQ", "status": "succeeded",
    "amount": { "value": 4980, "currency": "EUR" }, "secret": "whsec_…", "createdAt": "2026-11-24T10:15:02.417Z" }`);
  const printed = {
    id: 12,
    orderId: 31,
    eventId: 'evt_pnUvlEhyeo5TcY7rtp6Ufg',
    status: 'succeeded',
    amount: { value: 4980, currency: 'EUR' },
    secret: 'whsec_7msxhl8t8v7EjDpyp3iWM8ik1J94PWtY',
    createdAt: '2026-11-28T10:25:59.925Z',
  };
  const compare = (value: unknown) => compareWholeOutput(shown, JSON.stringify(value));

  test('matches another run: other ids of the same kind, other times, the elided part of a string', () => {
    assert.deepEqual(compare(printed), []);
  });

  test('differs in any other value, member or type', () => {
    assert.deepEqual(compare({ ...printed, status: 'declined' }), ['/status: shown "succeeded", printed "declined"']);
    assert.deepEqual(compare({ ...printed, amount: { value: 4981, currency: 'EUR' } }), ['/amount/value: shown 4980, printed 4981']);
    assert.deepEqual(compare({ ...printed, orderId: null }), ['/orderId: shown the id 7, printed null']);
    assert.deepEqual(compare({ ...printed, eventId: 'pay_pnUvlEhyeo5TcY7rtp6Ufg' }), [
      '/eventId: shown the id "evt_3q2M1oYkq8v5cX0pW3n8GQ", printed "pay_pnUvlEhyeo5TcY7rtp6Ufg"',
    ]);
    assert.deepEqual(compare({ ...printed, createdAt: 'yesterday' }), ['/createdAt: shown a time, printed "yesterday"']);
    assert.deepEqual(compare({ ...printed, secret: 'sk_live' }), ['/secret: shown "whsec_…", printed "sk_live"']);
    const { status: _, ...withoutStatus } = printed;
    assert.deepEqual(compare(withoutStatus), ['/status: shown, not printed']);
    assert.deepEqual(compare({ ...printed, livemode: false }), ['/livemode: printed, not shown']);
  });

  test('`…` for a member lets others be printed; for a value, any value; for an element, more elements', () => {
    const open = json('{ "status": "paid", "durationMs": …, "items": [ { "qty": 2 }, … ], … }');
    assert.deepEqual(compareWholeOutput(open, '{"id":1,"status":"paid","durationMs":20,"items":[{"qty":2},{"qty":1}]}'), []);
    assert.deepEqual(compareWholeOutput(open, '{"status":"paid","durationMs":"x","items":[]}'), [
      '/items: shown 1 or more elements, printed 0',
    ]);
    assert.deepEqual(compareWholeOutput(json('[1, 2]'), '[1,2,3]'), ['the output: shown 2 elements, printed 3']);
  });

  test('several values are printed one after the other; all of what is printed must be shown', () => {
    assert.deepEqual(compareWholeOutput(json('{ "a": 1 }\n{ "b": 2 }'), '{"a":1}{"b":2}'), []);
    assert.deepEqual(compareWholeOutput(json('{ "a": 1 }'), '{"a":1}{"b":2}'), ['it printed more than is shown: {"b":2}']);
    assert.deepEqual(compareWholeOutput(json('{ "a": 1 }\n{ "b": 2 }'), '{"a":1}'), ['it printed less than is shown']);
    assert.deepEqual(compareWholeOutput(json('{ "a": 1 }'), 'Listening'), ['the output: shown an object, printed "Listening"']);
  });

  test('from a terminal still printing: incomplete until the values shown are whole, then how much they took', () => {
    assert.deepEqual(compareOutput(json('{ "a": [1, "}"] }'), '{"a": [1, "}"'), { kind: 'incomplete' });
    assert.deepEqual(compareOutput(json('{ "a": [1, "}"] }'), '{"a": [1, "}"]}\nnext'), { kind: 'matched', length: 16 });
  });
});

describe('a shown text output', () => {
  test('matches line by line, `…` standing for any part of a line', () => {
    const shown = text('deprecation: @1796083200\nevt_… again: already handled');
    assert.deepEqual(compareWholeOutput(shown, 'deprecation: @1796083200\r\nevt_pnU again: already handled\n'), []);
    assert.deepEqual(compareWholeOutput(shown, 'deprecation: @1796083201\nevt_pnU again: already handled\n'), [
      'line 1: shown "deprecation: @1796083200", printed "deprecation: @1796083201"',
    ]);
    assert.deepEqual(compareWholeOutput(text('204'), '204'), []);
    assert.deepEqual(compareWholeOutput(text('204'), '204\n200\n'), ['it printed more than is shown: 200']);
  });

  test('from a terminal still printing: incomplete until its last line has ended', () => {
    assert.deepEqual(compareOutput(text('Listening on http://127.0.0.1:4000/orderpay'), 'Listening on http://127.0.0.1:4000/ord'), {
      kind: 'incomplete',
    });
    assert.deepEqual(compareOutput(text('Listening on …'), '\nListening on x\n{'), { kind: 'matched', length: 16 });
  });
});
