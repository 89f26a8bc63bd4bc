/** The JSDoc examples of the public files, packages/, src/cli/ and src/kits/, run as tests: see [_jsdoc_examples.ts](./_jsdoc_examples.ts). */

import { testExamples } from "./_jsdoc_examples.ts";

testExamples("public");
