// Product representation and the request schemas of the product routes.
import { Type, type Static } from 'typebox';
import { Id, Money, MoneyOf, PageParams, Timestamp, SortParam } from '../http/schemas.ts';
import { PRODUCT_SORT_KEYS } from './products.rules.ts';

export const MAX_PRICE = 1_000_000_000_000;

export const Product = Type.Object(
  {
    id: Id('Identifier of the product.'),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    price: MoneyOf(Money('Unit price.'), 'Unit price.'),
    active: Type.Boolean({ description: 'Only active products can be ordered.' }),
    createdAt: Timestamp('When the product was created.'),
    updatedAt: Timestamp('When the product last changed.'),
  },
  { $id: 'Product', additionalProperties: false },
);
export type Product = Static<typeof Product>;

export const ProductBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    price: MoneyOf(
      Type.Integer({ format: 'int64', minimum: 0, maximum: MAX_PRICE, description: 'Unit price in minor units of currency.' }),
      'Unit price.',
    ),
    active: Type.Boolean(),
  },
  { title: 'ProductBody', additionalProperties: false, description: 'The complete writable representation of a product.' },
);
export type ProductBody = Static<typeof ProductBody>;

export const CreateProductBody = Type.Object(
  { ...ProductBody.properties, active: Type.Optional(Type.Boolean({ default: true, description: 'Defaults to true.' })) },
  { title: 'CreateProductBody', additionalProperties: false },
);
export type CreateProductBody = Static<typeof CreateProductBody>;

export const ListProductsQuery = Type.Object(
  {
    active: Type.Optional(Type.Boolean({ description: 'Only active (true) or inactive (false) products.' })),
    sort: Type.Optional(
      SortParam(PRODUCT_SORT_KEYS, 'Comma-separated keys from name, price, createdAt, id; "-" for descending. Default id.', '-price,name'),
    ),
    ...PageParams,
  },
  { additionalProperties: false },
);
export type ListProductsQuery = Static<typeof ListProductsQuery>;

export const ProductIdParams = Type.Object({ productId: Id('Identifier of the product.') }, { additionalProperties: false });
