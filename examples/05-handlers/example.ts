/**
 * Handlers: several handlers per cause, and the kinds of resource-changing
 * handlers (Kopf's "Handlers").
 *
 * - Several handlers of one cause run in the order they are declared; each
 *   has its own id (here: the function's name) and its own progress.
 * - `kopf.on.resume` runs once per operator process for every object that
 *   already existed when the operator started (not for new ones: they get
 *   the creation handlers instead).
 * - `kopf.on.update` gets the `old` and `new` essence and the `diff` between
 *   them; `kopf.on.field` the same, but only for one field and only when it
 *   changes (also when it appears, at creation).
 * - `kopf.on.delete` handlers keep the object (with a finalizer) until they
 *   succeed.
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/05-handlers/example.ts`
 * (with `KUBECONFIG` pointing at a cluster, or at `deno task apiserver`), then
 * `kubectl apply -f examples/obj.yaml`,
 * `kubectl patch -f examples/obj.yaml --type merge -p '{"spec":{"field":"value2"}}'`,
 * restart the operator (to see the resuming), and `kubectl delete -f examples/obj.yaml`.
 */
import * as kopf from "../../mod.ts";

kopf.on.resume("kopfexamples", function resume_fn_1({ reason }) {
  console.log(`RESUMED 1st (reason: ${reason})`);
});

kopf.on.create("kopfexamples", function create_fn_1() {
  console.log("CREATED 1st");
});

kopf.on.resume("kopfexamples", function resume_fn_2({ reason }) {
  console.log(`RESUMED 2nd (reason: ${reason})`);
});

kopf.on.create("kopfexamples", function create_fn_2() {
  console.log("CREATED 2nd");
});

kopf.on.update("kopfexamples", function update_fn({ old, new: now, diff }) {
  // The essences before and after: spec, labels and annotations (no status, no Kopf's own).
  const [before, after] = [old, now] as kopf.AnyObject[];
  console.log(
    `UPDATED: ${before?.spec.field} -> ${after?.spec.field}; diff: ${JSON.stringify(diff)}`,
  );
});

kopf.on.delete("kopfexamples", function delete_fn_1() {
  console.log("DELETED 1st");
});

kopf.on.delete("kopfexamples", function delete_fn_2() {
  console.log("DELETED 2nd");
});

kopf.on.field("kopfexamples", { field: "spec.field" }, function field_fn({ old, new: now, diff }) {
  console.log(`FIELD CHANGED: ${old} -> ${now}; diff: ${JSON.stringify(diff)}`);
});
