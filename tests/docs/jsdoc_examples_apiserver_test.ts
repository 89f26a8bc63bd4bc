/** The JSDoc examples of apiserver's files, run as tests: see [_jsdoc_examples.ts](./_jsdoc_examples.ts). */

import { testExamples } from "./_jsdoc_examples.ts";

testExamples("apiserver");
