// Schemas shared by every resource: problem body, collection envelope, ids and paging parameters.
import { Type, type TInteger, type TSchema } from 'typebox';

export const MAX_ID = Number.MAX_SAFE_INTEGER;

export const Id = (description: string) => Type.Integer({ minimum: 1, maximum: MAX_ID, description });

export const Money = (description: string) =>
  Type.Integer({
    minimum: 0,
    maximum: 1_000_000_000_000_000,
    description: `${description} Integer count of minor units of \`currency\` (cents for EUR/USD, yen for JPY).`,
  });

export const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 alphabetic currency code.', examples: ['EUR'] });

/** A money object (v2): an integer amount in minor units with its currency, as one value. */
export const MoneyOf = (value: TInteger, description: string) =>
  Type.Object({ value, currency: Currency }, { additionalProperties: false, description });

export const Timestamp = (description: string) => Type.String({ format: 'date-time', description: `${description} RFC 3339, UTC.` });

export const Problem = Type.Object(
  {
    type: Type.String({ format: 'uri', description: 'Identifies the problem type; a page describing it.' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String({ description: 'The request path this occurrence belongs to.' }),
    code: Type.String({ description: 'Stable machine-readable code from the error catalogue (docs/errors.md).' }),
    requestId: Type.String({ description: 'Also in the X-Request-Id response header; quote it in support requests.' }),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          detail: Type.String(),
          pointer: Type.Optional(Type.String({ description: 'RFC 6901 JSON Pointer into the request body.' })),
          parameter: Type.Optional(Type.String({ description: 'Name of the query, path or header parameter.' })),
        }),
      ),
    ),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details.' },
);

export const ProblemRef = Type.Ref('Problem');

export const CollectionMeta = Type.Object(
  {
    total: Type.Integer({ minimum: 0, description: 'Exact number of elements matching the filters, across all pages.' }),
    page: Type.Integer({ minimum: 1 }),
    pageSize: Type.Integer({ minimum: 1, maximum: 100 }),
    totalPages: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

export function Envelope<T extends TSchema>(item: T, description: string) {
  return Type.Object({ data: Type.Array(item), meta: CollectionMeta }, { additionalProperties: false, description });
}

export const PageParams = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1.' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Elements per page, 1–100.' })),
};

/** Conditional request headers (RFC 9110 §13.1), as read by GET, PUT and DELETE. */
export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({ description: 'Entity tag from a GET; the change is made only if it still matches (strong comparison).' }),
  ),
});
export const IfNoneMatchHeaders = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({ description: 'Entity tags; 304 when one matches the current representation (weak comparison).' }),
  ),
});

/** Problem responses an operation can answer with, for its OpenAPI document. */
export function problems(...statuses: number[]): Record<number, typeof ProblemRef> {
  return Object.fromEntries(statuses.map((s) => [s, ProblemRef]));
}
