// Several sort keys, in order, each ascending or descending: the `sort` parameter as controls.
import { useId } from 'react';
import type { SortKey } from '../sort.ts';

const LABELS: Record<string, string> = { createdAt: 'Created', status: 'Status', total: 'Total', id: 'Id' };

export function SortControls({
  keys,
  allowed,
  onChange,
}: {
  keys: SortKey[];
  allowed: readonly string[];
  onChange: (keys: SortKey[]) => void;
}) {
  const id = useId();
  const unused = allowed.filter((key) => !keys.some((k) => k.key === key));
  const replace = (index: number, change: Partial<SortKey>) => onChange(keys.map((k, i) => (i === index ? { ...k, ...change } : k)));
  const move = (index: number, by: number) => {
    const next = [...keys];
    const [moved] = next.splice(index, 1);
    next.splice(index + by, 0, moved!);
    onChange(next);
  };
  return (
    <fieldset className="sort">
      <legend>Sort by (first key first)</legend>
      {keys.length === 0 ? <p className="muted">The collection's default order.</p> : null}
      <ol>
        {keys.map((k, index) => (
          <li key={k.key} className="sort-key">
            <div>
              <label htmlFor={`${id}-key-${index}`}>Sort key {index + 1}</label>
              <select id={`${id}-key-${index}`} value={k.key} onChange={(event) => replace(index, { key: event.target.value })}>
                {[k.key, ...unused].map((key) => (
                  <option key={key} value={key}>
                    {LABELS[key] ?? key}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label htmlFor={`${id}-direction-${index}`}>Direction of sort key {index + 1}</label>
              <select
                id={`${id}-direction-${index}`}
                value={k.descending ? 'desc' : 'asc'}
                onChange={(event) => replace(index, { descending: event.target.value === 'desc' })}
              >
                <option value="asc">Ascending</option>
                <option value="desc">Descending</option>
              </select>
            </div>
            <div className="sort-actions">
              <button
                type="button"
                className="secondary outline"
                disabled={index === 0}
                onClick={() => move(index, -1)}
                aria-label={`Move sort key ${index + 1} up`}
              >
                Up
              </button>
              <button
                type="button"
                className="secondary outline"
                disabled={index === keys.length - 1}
                onClick={() => move(index, 1)}
                aria-label={`Move sort key ${index + 1} down`}
              >
                Down
              </button>
              <button
                type="button"
                className="secondary outline"
                onClick={() => onChange(keys.filter((_, i) => i !== index))}
                aria-label={`Remove sort key ${index + 1}`}
              >
                Remove
              </button>
            </div>
          </li>
        ))}
      </ol>
      {unused.length ? (
        <button type="button" className="secondary" onClick={() => onChange([...keys, { key: unused[0]!, descending: false }])}>
          Add sort key
        </button>
      ) : null}
    </fieldset>
  );
}
