// Walks a collection page after page by its cursors (docs/api.md, "Paging"): each page's
// `meta.nextCursor` is sent as `after` for the next, with the caller's filters and sort unchanged,
// until a page says there is none. By cursor an element is never repeated or skipped, whatever is
// added or removed meanwhile, and every page costs what the first does.
import type { Client } from 'openapi-fetch';
import { toResponseError } from './problem.ts';
import type { paths } from './schema.ts';

/** What every page of a collection carries (the API's `Envelope`). */
interface PageShape {
  data: unknown[];
  meta: { nextCursor: string | null };
}

type GetOperation<P extends keyof paths> = paths[P]['get'];

type PageBody<Operation> = Operation extends { responses: { 200: { content: { 'application/json': infer Body extends PageShape } } } }
  ? Body
  : never;

/** The paths whose GET answers a page: `/orders`, `/products`, `/users/{userId}/orders`, … */
export type CollectionPath = { [P in keyof paths]: PageBody<GetOperation<P>> extends never ? never : P }[keyof paths];

/** One page of the collection at P: `data` and `meta`, as the API answers it. */
export type PageOf<P extends CollectionPath> = PageBody<GetOperation<P>>;

/** An element of the collection at P. */
export type ItemOf<P extends CollectionPath> = PageOf<P>['data'][number];

type ParametersOf<P extends CollectionPath> = GetOperation<P> extends { parameters: infer Parameters } ? Parameters : never;
type QueryOf<P extends CollectionPath> = NonNullable<ParametersOf<P> extends { query?: infer Query } ? Query : never>;
type PathParamsOf<P extends CollectionPath> = ParametersOf<P> extends { path?: infer Path } ? Path : never;

/**
 * The collection's parameters, its filters, sort and pageSize passed through as given. The pager
 * names the pages: no `page` or `before` (`after` starts after that cursor, as when resuming a walk).
 */
export type PagesParams<P extends CollectionPath> = Omit<ParametersOf<P>, 'query'> & { query?: Omit<QueryOf<P>, 'page' | 'before'> };

export interface PagesInit<P extends CollectionPath> {
  params?: PagesParams<P>;
  /** Aborts the request in flight, and so the walk. */
  signal?: AbortSignal;
}

/** The init argument: required where the path has parameters (`/users/{userId}/orders`). */
export type PagesArgs<P extends CollectionPath> =
  undefined extends PathParamsOf<P> ? [init?: PagesInit<P>] : [init: PagesInit<P> & { params: PagesParams<P> }];

// openapi-fetch's GET is typed per literal path; the walk is the same for every collection.
type AnyGet = (path: string, init: object) => Promise<{ data?: PageShape; error?: unknown; response: Response }>;

/** The pages of the collection at path, first to last; a refused page throws (OrderpayProblem). */
export async function* walkPages<P extends CollectionPath>(
  client: Client<paths>,
  path: P,
  init: PagesInit<P> = {},
): AsyncGenerator<PageOf<P>, void, undefined> {
  const get = client.GET as unknown as AnyGet;
  let after = (init.params?.query as { after?: string } | undefined)?.after;
  for (;;) {
    const params = { ...init.params, query: { ...init.params?.query, after } };
    const { data, error, response } = await get(path, { ...init, params });
    if (!response.ok || !data) throw toResponseError(response, error);
    yield data as PageOf<P>;
    if (data.meta.nextCursor === null) return;
    after = data.meta.nextCursor;
  }
}

/** The elements of the collection at path, page after page. */
export async function* walkItems<P extends CollectionPath>(
  client: Client<paths>,
  path: P,
  init?: PagesInit<P>,
): AsyncGenerator<ItemOf<P>, void, undefined> {
  for await (const page of walkPages(client, path, init)) yield* page.data as ItemOf<P>[];
}
