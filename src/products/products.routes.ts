// Routes of the product catalogue.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { pageOf } from '../core/paging.ts';
import { requireScope } from '../http/authenticate.ts';
import { noneMatch } from '../http/etag.ts';
import { resourceUrl, sendNotModified, sendPage, sendRepresentation } from '../http/representation.ts';
import { Envelope, IfMatchHeaders, IfNoneMatchHeaders, problems } from '../http/schemas.ts';
import { productEtag, productIfMatch, productRepresentation } from './products.representation.ts';
import { CreateProductBody, ListProductsQuery, ProductBody, ProductIdParams } from './products.schemas.ts';
import { createProduct, getProduct, listProducts, replaceProduct } from './products.service.ts';

const ProductRef = Type.Ref('Product');
const readSecurity = [{ bearer: [] }];
const writeSecurity = [{ bearer: ['products:write'] }];

export async function productsRoutes(parent: FastifyInstance): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/products',
    {
      schema: {
        tags: ['products'],
        operationId: 'listProducts',
        summary: 'List products',
        description: 'The catalogue, to any authenticated caller; filter by `active`, sort by name, price, createdAt or id.',
        security: readSecurity,
        querystring: ListProductsQuery,
        response: { 200: Envelope(ProductRef, 'A page of products.'), ...problems(400, 401, 406) },
      },
    },
    async function listProductsRoute(request, reply) {
      const products = await listProducts(await app.collectionReader(request), {
        active: request.query.active,
        sort: request.query.sort,
        page: pageOf(request.query, app.cursors),
      });
      return sendPage(request, reply, products, productRepresentation);
    },
  );

  app.get(
    '/products/:productId',
    {
      schema: {
        tags: ['products'],
        operationId: 'getProduct',
        summary: 'Get a product',
        description: 'Carries a strong ETag; with a matching If-None-Match the answer is 304 without a body.',
        security: readSecurity,
        params: ProductIdParams,
        headers: IfNoneMatchHeaders,
        response: { 200: ProductRef, 304: Type.Null({ description: 'Not modified.' }), ...problems(400, 401, 404, 406) },
      },
    },
    async function getProductRoute(request, reply) {
      const product = await getProduct(app.db, request.params.productId);
      const etag = productEtag(product, request.apiVersion);
      if (noneMatch(request.headers['if-none-match'], etag)) return sendNotModified(reply, etag);
      return sendRepresentation(request, reply, 200, productRepresentation(product), { etag });
    },
  );

  app.post(
    '/products',
    {
      schema: {
        tags: ['products'],
        operationId: 'createProduct',
        summary: 'Create a product (staff)',
        description: 'Scope products:write (staff only). Answers 201 with Location and ETag.',
        security: writeSecurity,
        body: CreateProductBody,
        response: { 201: ProductRef, ...problems(400, 401, 403, 406, 413, 415) },
      },
    },
    async function createProductRoute(request, reply) {
      const principal = requireScope(request, 'products:write');
      const { price, ...fields } = request.body;
      const product = await createProduct(app.db, principal, { ...fields, price: price.value, currency: price.currency });
      return sendRepresentation(request, reply, 201, productRepresentation(product), {
        etag: productEtag(product, request.apiVersion),
        location: resourceUrl(request, `/products/${product.id}`),
      });
    },
  );

  app.put(
    '/products/:productId',
    {
      schema: {
        tags: ['products'],
        operationId: 'replaceProduct',
        summary: 'Replace a product (staff)',
        security: writeSecurity,
        description: 'Complete replacement; If-Match honoured. Orders already placed keep the price they were placed at.',
        params: ProductIdParams,
        headers: IfMatchHeaders,
        body: ProductBody,
        response: { 200: ProductRef, ...problems(400, 401, 403, 404, 406, 412, 413, 415) },
      },
    },
    async function replaceProductRoute(request, reply) {
      const principal = requireScope(request, 'products:write');
      const product = await replaceProduct(app.db, principal, {
        ...request.body,
        price: request.body.price.value,
        currency: request.body.price.currency,
        productId: request.params.productId,
        precondition: productIfMatch(request.headers['if-match'], request.apiVersion),
      });
      return sendRepresentation(request, reply, 200, productRepresentation(product), { etag: productEtag(product, request.apiVersion) });
    },
  );
}
