import assert from "node:assert/strict";
import { matchesFields, parseFieldSelector } from "../../src/cogs/structs/field_selector.ts";
import { SelectorError } from "../../src/cogs/structs/selector_error.ts";

Deno.test("`parseFieldSelector()` answers an empty selector with no requirements", () => {
  assert.deepEqual(parseFieldSelector(""), []);
  assert.deepEqual(parseFieldSelector(" , "), []);
});

Deno.test("`parseFieldSelector()` reads =, == and !=", () => {
  assert.deepEqual(parseFieldSelector("metadata.name=web,spec.nodeName==n1,status.phase!=Failed"), [
    { field: "metadata.name", operator: "=", value: "web" },
    { field: "spec.nodeName", operator: "=", value: "n1" },
    { field: "status.phase", operator: "!=", value: "Failed" },
  ]);
});

Deno.test("`parseFieldSelector()` accepts an empty value", () => {
  assert.deepEqual(parseFieldSelector("spec.nodeName="), [
    { field: "spec.nodeName", operator: "=", value: "" },
  ]);
  assert.deepEqual(parseFieldSelector("spec.nodeName!="), [
    { field: "spec.nodeName", operator: "!=", value: "" },
  ]);
});

Deno.test("`parseFieldSelector()` skips empty requirements and trims whitespace", () => {
  assert.deepEqual(parseFieldSelector("a=b,, c = d ,"), [
    { field: "a", operator: "=", value: "b" },
    { field: "c", operator: "=", value: "d" },
  ]);
});

Deno.test("`parseFieldSelector()` resolves backslash escapes in values", () => {
  assert.deepEqual(parseFieldSelector(String.raw`a=x\,y,b=p\=q,c=back\\slash`), [
    { field: "a", operator: "=", value: "x,y" },
    { field: "b", operator: "=", value: "p=q" },
    { field: "c", operator: "=", value: String.raw`back\slash` },
  ]);
});

Deno.test("`parseFieldSelector()` does not split on an escaped comma after an escaped backslash", () => {
  assert.deepEqual(parseFieldSelector(String.raw`a=x\\,b=y`), [
    { field: "a", operator: "=", value: "x\\" },
    { field: "b", operator: "=", value: "y" },
  ]);
});

function parseError(text: string): string {
  try {
    parseFieldSelector(text);
  } catch (error) {
    assert.ok(error instanceof SelectorError, `not a SelectorError: ${error}`);
    assert.equal(error.name, "SelectorError");
    assert.ok(!error.message.includes("\n"));
    return error.message;
  }
  assert.fail(`"${text}" parsed without an error`);
}

Deno.test("`parseFieldSelector()` rejects a requirement without an operator", () => {
  assert.match(parseError("metadata.name"), /can't understand "metadata.name" in "metadata.name"/);
  assert.match(parseError("a=b,oops"), /can't understand "oops"/);
});

Deno.test("`parseFieldSelector()` rejects a requirement without a field name", () => {
  assert.match(parseError("=web"), /no field name in "=web"/);
  assert.match(parseError(" != x"), /no field name/);
});

Deno.test("`parseFieldSelector()` rejects bad escapes and unescaped specials in values", () => {
  assert.match(parseError(String.raw`a=x\ny`), /invalid escape sequence \\n in "a=x\\ny"/);
  assert.match(parseError("a=x\\"), /invalid escape sequence \\ at the end/);
  assert.match(parseError("a=b=c"), /unescaped '=' in the value of "a=b=c" \(write it as \\=\)/);
  assert.match(parseError("a==b=c"), /unescaped '='/);
});

Deno.test("`matchesFields()` compares fields for equality and inequality", () => {
  const fields: Record<string, string> = { "metadata.name": "web", "status.phase": "Running" };
  const get = (field: string) => fields[field];
  const check = (selector: string, expected: boolean) =>
    assert.equal(matchesFields(parseFieldSelector(selector), get), expected, selector);
  check("metadata.name=web", true);
  check("metadata.name=db", false);
  check("metadata.name!=db", true);
  check("metadata.name!=web", false);
  check("metadata.name=web,status.phase=Running", true);
  check("metadata.name=web,status.phase!=Running", false);
});

Deno.test("`matchesFields()` compares an absent field as the empty string", () => {
  const get = (_field: string) => undefined;
  assert.equal(matchesFields(parseFieldSelector("spec.nodeName="), get), true);
  assert.equal(matchesFields(parseFieldSelector("spec.nodeName!="), get), false);
  assert.equal(matchesFields(parseFieldSelector("spec.nodeName!=n1"), get), true);
  assert.equal(matchesFields(parseFieldSelector("spec.nodeName=n1"), get), false);
});

Deno.test("`matchesFields()` matches everything with no requirements", () => {
  assert.equal(matchesFields([], () => "x"), true);
});
