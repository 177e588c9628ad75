// The Link header of a page keeps the request's other query parameters as sent: the links are
// built from the query's form-encoded pairs once, and must read as URLSearchParams' delete and
// set would make them (what they were built with before, kept here as the reference).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Collection } from '../../src/core/paging.ts';
import { setPageLinks } from '../../src/http/links.ts';

const PUBLIC_URL = 'https://api.example.com';

function referenceLink(requestUrl: string, rel: string, name: 'page' | 'after' | 'before', value: string): string {
  const url = new URL(requestUrl, PUBLIC_URL);
  const query = new URLSearchParams(url.searchParams);
  for (const other of ['page', 'after', 'before']) if (other !== name) query.delete(other);
  query.set(name, value);
  return `<${PUBLIC_URL}${url.pathname}?${query.toString()}>; rel="${rel}"`;
}

function linksOf(requestUrl: string, meta: Collection<unknown>['meta']): string {
  const headers = new Map<string, string>();
  const request = { url: requestUrl, server: { config: { publicUrl: PUBLIC_URL } } } as unknown as FastifyRequest;
  const reply = {
    getHeader: (name: string) => headers.get(name),
    header: (name: string, value: string) => headers.set(name, value),
  } as unknown as FastifyReply;
  setPageLinks(request, reply, { data: [], meta });
  return headers.get('link')!;
}

const QUERIES = [
  '',
  '?',
  '?status=pending',
  '?page=3&status=pending',
  '?status=pending&page=3&page=4',
  '?after=abc.def&sort=-createdAt,status&minTotal=100',
  '?before=x&after=y&page=2&customerId=7',
  '?q=a%20b+c&%C3%A9t%C3%A9=%E2%82%AC&empty=&flag',
  '?status=pending&status=paid&pageSize=5',
  '?sort=-createdAt%2Cstatus&page=abc',
  '?&',
  '?a=1&&b=2&',
  '?status=pending#fragment?page=2',
  '#fragment?status=pending',
  '?q=two words&quote="x"&angle=<a>&tick=`&curly={}&pipe=|&caret=^',
  '?%zz=%E2%82&page=%',
];

test('the links keep the query as URLSearchParams would, whatever it holds', () => {
  const meta = { total: 100, page: 3, pageSize: 20, totalPages: 5, nextCursor: 'eyJ2Ijp.bnQ-_x', prevCursor: 'cHJldg.c2ln' };
  for (const query of QUERIES) {
    const url = `/v2/orders${query}`;
    const expected = [
      referenceLink(url, 'first', 'page', '1'),
      referenceLink(url, 'prev', 'before', meta.prevCursor),
      referenceLink(url, 'next', 'after', meta.nextCursor),
      referenceLink(url, 'last', 'page', '5'),
    ].join(', ');
    assert.equal(linksOf(url, meta), expected, query);
  }
});

test('a page without cursors links its neighbours by number, and a value that needs encoding is encoded', () => {
  const url = '/orders?status=pending&page=9';
  const meta = { total: 0, page: 9, pageSize: 20, totalPages: 0, nextCursor: null, prevCursor: null };
  assert.equal(
    linksOf(url, meta),
    [referenceLink(url, 'first', 'page', '1'), referenceLink(url, 'prev', 'page', '1'), referenceLink(url, 'last', 'page', '1')].join(', '),
  );
  const odd = { ...meta, total: 40, totalPages: 2, page: 2, nextCursor: 'a b+c/é' };
  assert.equal(
    linksOf(url, odd),
    [
      referenceLink(url, 'first', 'page', '1'),
      referenceLink(url, 'prev', 'page', '1'),
      referenceLink(url, 'next', 'after', 'a b+c/é'),
      referenceLink(url, 'last', 'page', '2'),
    ].join(', '),
  );
});
