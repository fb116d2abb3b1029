/**
 * Loads one API answer for a view, again on `reload()` and, when `refreshMs` is given, every
 * `refreshMs` while the view is shown (a delivery's status changes without the console asking).
 * A reload keeps the last answer on screen until the next one arrives; only the latest request's
 * answer is kept, so a slow earlier one cannot overwrite a newer one.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError } from "./api-client.ts";

export interface ApiData<T> {
  data: T | null;
  error: ApiError | null;
  loading: boolean;
  reload: () => void;
}

interface Loaded<T> {
  key: string;
  data: T | null;
  error: ApiError | null;
}

/** `key` names the resource (a webhook's id, say): a new key starts from nothing. */
export function useApiData<T>(load: () => Promise<T>, key: string, refreshMs?: number): ApiData<T> {
  const [loaded, setLoaded] = useState<Loaded<T>>({ key, data: null, error: null });
  const [loading, setLoading] = useState(true);
  const loadRef = useRef(load);
  loadRef.current = load;
  const latest = useRef(0);

  const run = useCallback(() => {
    const request = ++latest.current;
    setLoading(true);
    loadRef.current().then(
      (data) => {
        if (request !== latest.current) return;
        setLoaded({ key, data, error: null });
        setLoading(false);
      },
      (failure: unknown) => {
        if (request !== latest.current) return;
        const error = failure instanceof ApiError ? failure : new ApiError(0, "unexpected", String(failure));
        setLoaded((previous) => ({ key, data: previous.key === key ? previous.data : null, error }));
        setLoading(false);
      },
    );
  }, [key]);

  useEffect(() => {
    run();
    const timer = refreshMs === undefined ? undefined : setInterval(run, refreshMs);
    return () => {
      clearInterval(timer);
      latest.current++; // an answer still on its way belongs to a view that is gone
    };
  }, [run, refreshMs]);

  const current = loaded.key === key;
  return {
    data: current ? loaded.data : null,
    error: current ? loaded.error : null,
    loading,
    reload: run,
  };
}
