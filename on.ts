/**
 * `kopf.on.*`: the handler decorators of Kopf, as registration functions.
 *
 * The registry and the handlers (`on.create`, `on.update`, `on.delete`, …) are
 * built by the operator-core issue; this file is the public place they live in,
 * listed in `deno.json` `exports` as `@kopf/kopf/on`.
 *
 * @module
 */

export {};
