// Product rules, pure.

/** Same-content replacement changes nothing (PUT is idempotent). */
export function isSameProduct(a: { name: string; price: number; currency: string; active: boolean }, b: typeof a): boolean {
  return a.name === b.name && a.price === b.price && a.currency === b.currency && a.active === b.active;
}

export const PRODUCT_SORT_KEYS = ['name', 'price', 'createdAt', 'id'] as const;
export type ProductSortKey = (typeof PRODUCT_SORT_KEYS)[number];
