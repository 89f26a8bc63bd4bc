/** The JSDoc examples of core's files, run as tests: see [_jsdoc_examples.ts](./_jsdoc_examples.ts). */

import { testExamples } from "./_jsdoc_examples.ts";

testExamples("core");
