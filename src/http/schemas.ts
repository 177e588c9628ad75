// Schemas shared by every resource: problem body, collection envelope, ids and paging parameters.
import { Type, type TInteger, type TSchema } from 'typebox';
import { MAX_RANGE_DAYS, MAX_REPORT_ROWS } from '../core/day-range.ts';
import { CURRENCY_CODES } from '../core/money.ts';
import { MAX_PAGE } from '../core/paging.ts';
import { ENTITY_TAGS_PATTERN } from './etag.ts';

/**
 * Keywords the OpenAPI documents state of a value that the route checks itself, to answer with its
 * own problem (code and message) rather than the validator's generic one: the validator compiler
 * leaves them out (src/http/validation.ts) and the documents drop the marker (src/http/openapi.ts).
 */
export const ROUTE_CHECKED = 'x-route-checked';

export function routeChecked<T extends TSchema>(schema: T, keywords: Record<string, unknown>): T {
  return Type.Unsafe({ ...schema, ...keywords, [ROUTE_CHECKED]: Object.keys(keywords) }) as unknown as T;
}

export const MAX_ID = Number.MAX_SAFE_INTEGER;
const MAX_PAGE_SIZE = 100;

// Every integer names its width (int32/int64) and every string its longest length: a bounded
// schema is one a client, a proxy or a generated SDK can size (OWASP API4:2023, checked by
// test/contract/owasp-lint.test.ts on every served OpenAPI document).
export const Id = (description: string) => Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_ID, description });

export const Money = (description: string) =>
  Type.Integer({
    format: 'int64',
    minimum: 0,
    maximum: 1_000_000_000_000_000,
    description: `${description} Integer count of minor units of \`currency\` (cents for EUR/USD, yen for JPY).`,
  });

/**
 * One of the active ISO 4217 codes the server's ICU knows: the documents list them; a service
 * names an unknown code of a request in its own problem (assertCurrency). Answers share the list,
 * so that a currency read from one can be sent back in a request as it is.
 */
export const Currency = routeChecked(
  Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 alphabetic currency code.', examples: ['EUR'] }),
  { enum: CURRENCY_CODES },
);

/** A money object (v2): an integer amount in minor units with its currency, as one value. */
export const MoneyOf = (value: TInteger, description: string) =>
  Type.Object({ value, currency: Currency }, { additionalProperties: false, description });

export const Timestamp = (description: string) =>
  Type.String({ format: 'date-time', maxLength: 32, description: `${description} RFC 3339, UTC.` });

/** Longest free text in a problem: a detail may quote the request path, which Node bounds at 16 KiB. */
export const MAX_PROBLEM_TEXT = 16_384;
/** Field errors listed in one problem; the detail still counts them all. */
export const MAX_FIELD_ERRORS = 100;

export const Problem = Type.Object(
  {
    type: Type.String({ format: 'uri', maxLength: 2048, description: 'Identifies the problem type; a page describing it.' }),
    title: Type.String({ maxLength: 200 }),
    status: Type.Integer({ format: 'int32', minimum: 400, maximum: 599 }),
    detail: Type.String({ maxLength: MAX_PROBLEM_TEXT }),
    instance: Type.String({ maxLength: MAX_PROBLEM_TEXT, description: 'The request path this occurrence belongs to.' }),
    code: Type.String({
      pattern: '^[A-Z][A-Z0-9_]*$',
      maxLength: 64,
      description: 'Stable machine-readable code from the error catalogue (docs/errors.md).',
    }),
    requestId: Type.String({
      pattern: '^[A-Za-z0-9._:-]+$',
      maxLength: 128,
      description: 'Also in the X-Request-Id response header; quote it in support requests.',
    }),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          detail: Type.String({ maxLength: MAX_PROBLEM_TEXT }),
          pointer: Type.Optional(
            Type.String({
              format: 'json-pointer',
              maxLength: MAX_PROBLEM_TEXT,
              description: 'RFC 6901 JSON Pointer into the request body.',
            }),
          ),
          parameter: Type.Optional(
            Type.String({ maxLength: MAX_PROBLEM_TEXT, description: 'Name of the query, path or header parameter.' }),
          ),
        }),
        { maxItems: MAX_FIELD_ERRORS, description: `At most ${MAX_FIELD_ERRORS} field errors, the first found.` },
      ),
    ),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details.' },
);

export const ProblemRef = Type.Ref('Problem');

// A cursor's payload carries the sort-key values of a row (a product name of 200 characters, at
// worst six bytes each in JSON), base64url-encoded, then its 16-byte MAC (src/core/cursor.ts).
const MAX_CURSOR = 2048;
const CURSOR_PATTERN = '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$';
const Cursor = (description: string) => Type.String({ pattern: CURSOR_PATTERN, maxLength: MAX_CURSOR, description });
const CursorOrNull = (description: string) => Type.Union([Cursor(description), Type.Null()], { description });

export const CollectionMeta = Type.Object(
  {
    total: Type.Integer({
      format: 'int64',
      minimum: 0,
      maximum: MAX_ID,
      description: 'Exact number of elements matching the filters, across all pages.',
    }),
    page: Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: MAX_PAGE,
      description:
        'The page number: the one asked for, or for a page reached by cursor the number its first element had when the cursor was made (at most 1000000, the largest `page`).',
    }),
    pageSize: Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_PAGE_SIZE }),
    totalPages: Type.Integer({ format: 'int64', minimum: 0, maximum: MAX_ID }),
    nextCursor: CursorOrNull('Give it as `after` for the next page (also the `next` link); null on the last page.'),
    prevCursor: CursorOrNull('Give it as `before` for the previous page (also the `prev` link); null on the first page.'),
  },
  { additionalProperties: false },
);

export function Envelope<T extends TSchema>(item: T, description: string) {
  return Type.Object(
    { data: Type.Array(item, { maxItems: MAX_PAGE_SIZE }), meta: CollectionMeta },
    { additionalProperties: false, description },
  );
}

export const PageParams = {
  page: Type.Optional(
    Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: MAX_PAGE,
      default: 1,
      description: 'Page number, from 1. Not with `after` or `before`; deep pages are faster by cursor.',
    }),
  ),
  pageSize: Type.Optional(
    Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_PAGE_SIZE, default: 20, description: 'Elements per page, 1–100.' }),
  ),
  after: Type.Optional(
    Cursor(
      'The page following this cursor (`meta.nextCursor` of a page of this collection, with the same filters and sort). However deep, it costs what page 1 does. Not with `page` or `before`.',
    ),
  ),
  before: Type.Optional(
    Cursor(
      'The page preceding this cursor (`meta.prevCursor` of a page of this collection, same filters and sort). Not with `page` or `after`.',
    ),
  ),
};

/**
 * A sort parameter: comma-separated keys of the collection, "-" for descending (parsed by
 * src/core/paging.ts, which names an unknown or repeated key in its own problem).
 */
export function SortParam(keys: readonly string[], description: string, example: string) {
  const key = `-?(?:${keys.join('|')})`; // keys are identifiers: nothing to escape
  return routeChecked(Type.String({ description, examples: [example] }), { pattern: `^${key}(?:,${key})*$` });
}

/** Conditional request headers (RFC 9110 §13.1), as read by GET, PUT, PATCH and DELETE; parsed by src/http/etag.ts. */
export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    routeChecked(
      Type.String({
        description:
          'Entity tag from a GET, or a list of them, or *; the change is made only if one still matches (strong comparison). An empty list matches nothing (412).',
      }),
      { pattern: ENTITY_TAGS_PATTERN },
    ),
  ),
});
export const IfNoneMatchHeaders = Type.Object({
  'if-none-match': Type.Optional(
    routeChecked(Type.String({ description: 'Entity tags, or *; 304 when one matches the current representation (weak comparison).' }), {
      pattern: ENTITY_TAGS_PATTERN,
    }),
  ),
});

/** Problem responses an operation can answer with, for its OpenAPI document. */
export function problems(...statuses: number[]): Record<number, typeof ProblemRef> {
  return Object.fromEntries(statuses.map((s) => [s, ProblemRef]));
}

/** A calendar day, YYYY-MM-DD (RFC 3339 full-date). */
export const Day = (description: string) => Type.String({ format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$', maxLength: 10, description });

/** The query of a daily report (src/core/day-range.ts): its UTC days, inclusive, and one currency where its rows have one. */
export function DayRangeQuery(currencyDescription?: string) {
  const currency: Record<string, TSchema> = currencyDescription
    ? { currency: Type.Optional(Type.Unsafe<string>({ ...Currency, description: currencyDescription })) }
    : {};
  return Type.Object(
    {
      from: Type.Optional(
        Day(
          `The first day read (UTC), inclusive. Default: the 30 days that end at \`to\`. At most ${MAX_RANGE_DAYS} days are read at once.`,
        ),
      ),
      to: Type.Optional(Day('The last day read (UTC), inclusive. Default: today, or the 30th day from `from` where that comes first.')),
      ...currency,
    },
    { additionalProperties: false },
  );
}

/** A daily report's answer: its rows, and the days they cover (days without a row had none). */
export function ReportEnvelope<T extends TSchema>(item: T, description: string) {
  return Type.Object(
    {
      data: Type.Array(item, { maxItems: MAX_REPORT_ROWS }),
      meta: Type.Object({ from: Day('The first day read (UTC).'), to: Day('The last day read (UTC).') }, { additionalProperties: false }),
    },
    { additionalProperties: false, description },
  );
}

/** What every daily report's description says of its limits. */
export const REPORT_LIMITS = `Days are UTC. At most ${MAX_RANGE_DAYS} days per request; a range and filter that hold more than ${MAX_REPORT_ROWS} rows are a 400 (read a shorter range, or one currency), never an answer cut short.`;
