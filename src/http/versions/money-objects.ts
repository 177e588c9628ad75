// v2: money is one object, { value, currency } in integer minor units (Adyen's shape). Before v2 an
// amount was an integer beside one flat `currency` field of its resource or request.
import { IsOptional, Type, type TObject, type TSchema } from 'typebox';
import { type JsonObject, type RequestChange, type ResourceChange, reshape, type VersionChange } from './version-change.ts';

interface Money {
  value: number;
  currency: string;
}

/**
 * The resource or body with each money object of fields flattened to its integer value, and one
 * `currency` field placed right after the field currencyAfter (where v1 had it).
 */
function flattenSchema(schema: TObject, fields: readonly string[], currencyAfter: string): TObject {
  return reshape(schema, (properties) => {
    const flat: Record<string, TSchema> = {};
    let currency: TSchema | undefined;
    for (const [name, property] of Object.entries(properties)) {
      if (!fields.includes(name)) {
        flat[name] = property;
        continue;
      }
      const money = property as TObject & { description?: string };
      const value = money.properties.value as TSchema;
      currency ??= money.properties.currency as TSchema;
      flat[name] = IsOptional(property) ? Type.Optional(value) : value;
    }
    const ordered: Record<string, TSchema> = {};
    for (const [name, property] of Object.entries(flat)) {
      ordered[name] = property;
      if (name === currencyAfter && currency) ordered.currency = optionalIf(properties, fields, currency);
    }
    return ordered;
  });
}

/** The flat currency is optional where every money field it stands for is. */
function optionalIf(properties: Record<string, TSchema>, fields: readonly string[], currency: TSchema): TSchema {
  return fields.every((f) => IsOptional(properties[f])) ? Type.Optional(currency) : currency;
}

/**
 * The body with each money object of fields flattened to its value, and one `currency` placed
 * right after currencyAfter, where v1 had it: responses are written in their objects' order
 * (src/http/serializers.ts), so the member goes where v1's schema documents it.
 */
function flattenBody(body: JsonObject, fields: readonly string[], currencyAfter: string): JsonObject {
  let currency: string | undefined;
  for (const field of fields) currency = (body[field] as Money | null | undefined)?.currency ?? currency;
  if (currency === undefined) return { ...body };
  const flat: JsonObject = {};
  for (const name in body) {
    const value = body[name];
    flat[name] = value != null && fields.includes(name) ? (value as Money).value : value;
    if (name === currencyAfter) flat.currency = currency;
  }
  if (!(currencyAfter in body)) flat.currency = currency;
  return flat;
}

function flattenResource(fields: readonly string[], currencyAfter: string): ResourceChange {
  return {
    schema: (newer) => flattenSchema(newer, fields, currencyAfter),
    downgrade: (body) => flattenBody(body, fields, currencyAfter),
  };
}

/** A v1 body's integer amount and flat currency → v2's money object (members the body lacked stay absent). */
function moneyRequest(field: string, currencyAfter = field): RequestChange {
  return {
    schema: (newer) => flattenSchema(newer, [field], currencyAfter),
    upgrade(body) {
      const { currency, ...rest } = body;
      if (rest[field] === undefined && currency === undefined) return rest;
      const money: Partial<Money> = {};
      if (rest[field] !== undefined) money.value = rest[field] as number;
      if (currency !== undefined) money.currency = currency as string;
      return { ...rest, [field]: money };
    },
    pointer(pointer) {
      if (pointer === `/${field}/value`) return `/${field}`;
      if (pointer === `/${field}/currency`) return '/currency';
      return pointer;
    },
  };
}

export const moneyObjects: VersionChange = {
  version: 2,
  description:
    'Money is one object `{ "value": <integer minor units>, "currency": "<ISO 4217>" }`: the flat `currency` field of orders, order items, products, payments and refunds is gone, in responses and requests.',
  resources: {
    Order: flattenResource(['total'], 'total'),
    OrderItem: flattenResource(['unitPrice', 'lineTotal'], 'lineTotal'),
    Product: flattenResource(['price'], 'price'),
    Payment: flattenResource(['amount', 'amountRefunded'], 'amount'),
    Refund: flattenResource(['amount'], 'amount'),
  },
  requests: {
    ReplaceOrderBody: moneyRequest('total'),
    PatchOrderBody: moneyRequest('total'),
    CreateProductBody: moneyRequest('price'),
    ProductBody: moneyRequest('price'),
    CreatePaymentBody: moneyRequest('amount'),
    CreateRefundBody: {
      // v1 refunds named no currency (the payment's is implied); v2's money object names it.
      schema: (newer) => reshape(newer, (p) => ({ ...p, amount: Type.Optional((p.amount as TObject).properties.value as TSchema) })),
      upgrade: (body) => (body.amount === undefined ? body : { ...body, amount: { value: body.amount } }),
      pointer: (pointer) => (pointer === '/amount/value' || pointer === '/amount/currency' ? '/amount' : pointer),
    },
  },
};
