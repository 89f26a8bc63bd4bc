/**
 * Whether `kopf run` is loading handler files right now: a file that calls `kopf.main()` as it
 * is imported (without `if (import.meta.main)`) would start a second command line inside the
 * first, which waits for the first's loading to end — for ever. `kopf.main()` refuses instead
 * (`entry.ts`). A module of its own, tiny, so that `mod.ts`'s graph does not take `run.ts`.
 *
 * @module
 */

let depth = 0;

/**
 * Marks a loading as begun; the returned function marks it as ended.
 *
 * @returns Ends the loading (once).
 */
export function beginLoading(): () => void {
  depth++;
  let ended = false;
  return () => {
    if (!ended) depth--;
    ended = true;
  };
}

/**
 * Whether a loading is going on.
 *
 * @returns True between {@link beginLoading} and its end.
 */
export function loadingHandlers(): boolean {
  return depth > 0;
}
