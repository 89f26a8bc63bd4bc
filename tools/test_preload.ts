/**
 * Preloaded into every test module by `deno task test` (`deno test --preload
 * tools/test_preload.ts`): gives every test the default time limit (see
 * [test_time_limit.ts](./test_time_limit.ts)), so a test that hangs fails by name.
 *
 * @module
 */

import { defaultTimeLimitMs, installTimeLimit } from "./test_time_limit.ts";

installTimeLimit(defaultTimeLimitMs());
