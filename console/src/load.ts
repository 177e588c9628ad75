// Loading what a page shows: the result, or the failure to show in its place, and a way to load
// it again. A load started later wins over one still under way.
import { type DependencyList, useCallback, useEffect, useRef, useState } from 'react';
import { describeFailure, type Failure } from './api/failure.ts';

export interface Loaded<T> {
  data?: T;
  failure?: Failure;
  loading: boolean;
  reload: () => void;
}

export function useLoad<T>(load: () => Promise<T>, deps: DependencyList): Loaded<T> {
  const [state, setState] = useState<{ data?: T; failure?: Failure; loading: boolean }>({ loading: true });
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => {
        if (mine === generation.current) setState({ data, loading: false });
      },
      (error: unknown) => {
        if (mine === generation.current) setState((previous) => ({ data: previous.data, failure: describeFailure(error), loading: false }));
      },
    );
    // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names what its load depends on
  }, deps);
  useEffect(() => {
    run();
  }, [run]);
  return { ...state, reload: run };
}
