/**
 * Filtering handlers: each handler runs only for the objects (and changes)
 * that match its filters; the rest of the handlers are not even mentioned in
 * the logs. Shown here, for `KopfExample` objects like examples/obj.yaml:
 *
 * - labels and annotations with exact values, `kopf.PRESENT`, `kopf.ABSENT`,
 *   and value callbacks (`(value, context) => boolean`);
 * - `when` callbacks on the whole context;
 * - `field` + `value` filters (a field without a value means `PRESENT`);
 * - update handlers with `old`/`new` change filters, and with a `value` filter
 *   that matches either side of the change;
 * - the callback combinators `kopf.all/any/none/not`;
 * - and the "stealth mode" on ConfigMaps: an object that matches no filter of
 *   any resource-changing handler of its kind is not handled at all — no log
 *   lines, no annotations on it; when it comes into the scope later (here: by
 *   getting the label), it is seen as created, not as updated.
 *
 * Run it: `deno run -A cli.ts run -A --verbose examples/11-filtering-handlers/example.ts`,
 * then `kubectl apply -f examples/obj.yaml`,
 * `kubectl patch -f examples/obj.yaml --type=merge -p '{"spec":{"field":"changed"}}'`,
 * and `kubectl create configmap cm1 --from-literal=a=1; kubectl label configmap cm1 kopf.dev/example=11`.
 *
 * @module
 */
import * as kopf from "../../mod.ts";

// Value callbacks get the value (undefined when absent) and the handler's context.
function sayYes(value: string | undefined, { spec }: kopf.ChangingContext): boolean {
  return value === "somevalue" && spec.field !== undefined;
}

function sayNo(value: string | undefined, { spec }: kopf.ChangingContext): boolean {
  return value === "somevalue" && spec.field === "not-this-value-for-sure";
}

// Labels.
kopf.on.create(
  "kopfexamples",
  { labels: { somelabel: "somevalue" } },
  function createWithLabelsMatching({ logger }) {
    logger.info("Label is matching.");
  },
);

kopf.on.create(
  "kopfexamples",
  { labels: { somelabel: kopf.PRESENT } },
  function createWithLabelsPresent({ logger }) {
    logger.info("Label is present.");
  },
);

kopf.on.create(
  "kopfexamples",
  { labels: { nonexistent: kopf.ABSENT } },
  function createWithLabelsAbsent({ logger }) {
    logger.info("Label is absent.");
  },
);

kopf.on.create(
  "kopfexamples",
  { labels: { somelabel: sayYes } },
  function createWithLabelsCallbackMatching({ logger }) {
    logger.info("Label callback matching.");
  },
);

kopf.on.create(
  "kopfexamples",
  { labels: { somelabel: "othervalue" } },
  function createWithLabelsNotMatching({ logger }) {
    logger.info("Label is not matching.");
  },
);

// Annotations.
kopf.on.create(
  "kopfexamples",
  { annotations: { someannotation: "somevalue" } },
  function createWithAnnotationsMatching({ logger }) {
    logger.info("Annotation is matching.");
  },
);

kopf.on.create(
  "kopfexamples",
  { annotations: { someannotation: kopf.PRESENT } },
  function createWithAnnotationsPresent({ logger }) {
    logger.info("Annotation is present.");
  },
);

kopf.on.create(
  "kopfexamples",
  { annotations: { nonexistent: kopf.ABSENT } },
  function createWithAnnotationsAbsent({ logger }) {
    logger.info("Annotation is absent.");
  },
);

kopf.on.create(
  "kopfexamples",
  { annotations: { someannotation: sayNo } },
  function createWithAnnotationsCallbackMismatch({ logger }) {
    logger.info("Annotation callback mismatch.");
  },
);

// Whole-object callbacks.
kopf.on.create(
  "kopfexamples",
  { when: () => true },
  function createWithFilterSatisfied({ logger }) {
    logger.info("Filter satisfied.");
  },
);

kopf.on.create(
  "kopfexamples",
  { when: () => false },
  function createWithFilterNotSatisfied({ logger }) {
    logger.info("Filter not satisfied.");
  },
);

// Fields and values.
kopf.on.create(
  "kopfexamples",
  { field: "spec.field", value: "value" },
  function createWithFieldValueSatisfied({ logger }) {
    logger.info("Field value is satisfied.");
  },
);

kopf.on.create(
  "kopfexamples",
  { field: "spec.field", value: "something-else" },
  function createWithFieldValueNotSatisfied({ logger }) {
    logger.info("Field value is not satisfied.");
  },
);

kopf.on.create(
  "kopfexamples",
  { field: "spec.field", value: kopf.PRESENT },
  function createWithFieldPresenceSatisfied({ logger }) {
    logger.info("Field presence is satisfied.");
  },
);

kopf.on.create(
  "kopfexamples",
  { field: "spec.inexistent", value: kopf.PRESENT },
  function createWithFieldPresenceNotSatisfied({ logger }) {
    logger.info("Field presence is not satisfied.");
  },
);

kopf.on.create(
  "kopfexamples",
  { field: "spec.inexistent", value: kopf.ABSENT },
  function createWithFieldAbsenceSatisfied({ logger }) {
    logger.info("Field absence is satisfied.");
  },
);

// Updates: `old` and `new` filter the two sides of a change; the handler gets the field's old and new values.
kopf.on.update(
  "kopfexamples",
  { id: "fieldChange", field: "spec.field", old: "value", new: "changed" },
  function updateWithFieldChangeSatisfied({ old, new: now, logger }) {
    logger.info(`Field change is satisfied: ${old} -> ${now}.`);
    return { old, new: now }; // lands in status["fieldChange/spec.field"] (the field is part of the id)
  },
);

kopf.on.update(
  "kopfexamples",
  { field: "spec.field", old: "x", new: "y" },
  function updateWithFieldChangeNotSatisfied({ logger }) {
    logger.info("Field change is not satisfied.");
  },
);

kopf.on.update(
  "kopfexamples",
  { field: "spec.field", value: "value" },
  function updateFromOrToValue({ logger }) {
    logger.info("Field had or got the value (either side of the change).");
  },
);

kopf.on.update(
  "kopfexamples",
  { field: "spec.items" },
  function updateOfUntouchedField({ logger }) {
    logger.info("Untouched field is affected.");
  },
);

// Combinators of callbacks.
const isKopfName = ({ name }: kopf.ChangingContext) => name.startsWith("kopf-");
const hasFieldValue = ({ spec }: kopf.ChangingContext) => spec.field === "value";
const isNever = (_: kopf.ChangingContext) => false;
const startsWithSome = (value: string | undefined) => !!value?.startsWith("some");
const endsWithValue = (value: string | undefined) => !!value?.endsWith("value");

kopf.on.create(
  "kopfexamples",
  {
    when: kopf.all([isKopfName, hasFieldValue]),
    labels: { somelabel: kopf.all([startsWithSome, endsWithValue]) },
  },
  function createWithAllCallbacks({ logger }) {
    logger.info("All callbacks are satisfied.");
  },
);

kopf.on.create(
  "kopfexamples",
  { when: kopf.any([isNever, isKopfName]) },
  function createWithAnyCallback({ logger }) {
    logger.info("Any callback is satisfied.");
  },
);

kopf.on.create(
  "kopfexamples",
  { when: kopf.none([isNever]) },
  function createWithNoneCallbacks({ logger }) {
    logger.info("None of the callbacks is satisfied.");
  },
);

kopf.on.create(
  "kopfexamples",
  { when: kopf.not(isKopfName) },
  function createWithNegatedCallback({ logger }) {
    logger.info("Negated callback is satisfied.");
  },
);

// Stealth mode: ConfigMaps without the label are invisible to this operator.
kopf.on.create(
  "v1",
  "configmaps",
  { labels: { "kopf.dev/example": "11" } },
  function configmapCreated({ logger }) {
    logger.info("A configmap came into the scope.");
  },
);

kopf.on.update(
  "v1",
  "configmaps",
  { labels: { "kopf.dev/example": "11" } },
  function configmapUpdated({ logger }) {
    logger.info("A configmap in the scope is updated.");
  },
);
