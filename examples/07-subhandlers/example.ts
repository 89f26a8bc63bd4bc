/**
 * Sub-handlers: handle each item of a list in the spec as a handler of its
 * own — with its own progress, retries, errors and log lines — with ids
 * `<parent>/<item>` (Kopf's "Sub-handlers").
 *
 * - `create_fn` declares a sub-handler per item with `kopf.subhandler()`;
 * - `register_fn` does the same imperatively with `kopf.register()`.
 *
 * The parent is called again in every handling cycle until all its
 * sub-handlers are finished; the finished ones are not called again. So the
 * parent must do nothing but declare its sub-handlers. Here, the sub-handler
 * of the second item fails temporarily at first (as if something was not
 * ready yet) and is retried a second later, alone.
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/07-subhandlers/example.ts`
 * (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`), then
 * `kubectl apply -f examples/obj.yaml` (its `spec.items` are `item1`, `item2`).
 */
import * as kopf from "../../mod.ts";

kopf.on.create("kopfexamples", function create_fn({ spec }) {
  for (const item of spec.items ?? []) {
    kopf.subhandler({ id: item }, function create_item_fn({ retry }) {
      console.log(`=== Handling creation for ${item} (retry ${retry}). ===`);
      if (item === "item2" && retry === 0) {
        throw new kopf.TemporaryError(`${item} is not ready yet.`, { delay: 1 });
      }
    });
  }
});

kopf.on.create("kopfexamples", function register_fn({ spec }) {
  for (const item of spec.items ?? []) {
    kopf.register(({ retry }) => {
      console.log(`=== Registered handling for ${item} (retry ${retry}). ===`);
    }, { id: item });
  }
});
