/** The JSDoc examples of cogs_data's files, run as tests: see [_jsdoc_examples.ts](./_jsdoc_examples.ts). */

import { testExamples } from "./_jsdoc_examples.ts";

testExamples("cogs_data");
