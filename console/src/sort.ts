// The `sort` query parameter of a collection (docs/api.md, "Collections"): comma-separated keys,
// applied in order, `-key` descending. The keys are those the v3 document's pattern lists for
// each collection (test/e2e/console.test.ts holds them to it).

export const ORDER_SORT_KEYS = ['createdAt', 'status', 'total', 'id'] as const;
export const PAYMENT_SORT_KEYS = ['createdAt', 'id'] as const;

export interface SortKey {
  key: string;
  descending: boolean;
}

export function parseSort(value: string | null, allowed: readonly string[]): SortKey[] {
  if (!value) return [];
  const keys: SortKey[] = [];
  for (const part of value.split(',')) {
    const descending = part.startsWith('-');
    const key = descending ? part.slice(1) : part;
    if (allowed.includes(key) && !keys.some((k) => k.key === key)) keys.push({ key, descending });
  }
  return keys;
}

export function formatSort(keys: readonly SortKey[]): string {
  return keys.map((k) => `${k.descending ? '-' : ''}${k.key}`).join(',');
}
