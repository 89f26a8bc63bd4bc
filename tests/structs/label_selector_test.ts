import assert from "node:assert/strict";
import {
  labelSelectorFromObject,
  matchesLabels,
  parseLabelSelector,
} from "../../src/cogs/structs/label_selector.ts";
import { SelectorError } from "../../src/cogs/structs/selector_error.ts";

Deno.test("`parseLabelSelector()` answers an empty or blank selector with no requirements", () => {
  assert.deepEqual(parseLabelSelector(""), []);
  assert.deepEqual(parseLabelSelector("   \t"), []);
});

Deno.test("`parseLabelSelector()` reads equality in all three spellings", () => {
  assert.deepEqual(parseLabelSelector("a=b,c==d,e!=f"), [
    { key: "a", operator: "=", values: ["b"] },
    { key: "c", operator: "=", values: ["d"] },
    { key: "e", operator: "!=", values: ["f"] },
  ]);
});

Deno.test("`parseLabelSelector()` reads set-based requirements", () => {
  assert.deepEqual(parseLabelSelector("env in (prod, staging),tier notin(db)"), [
    { key: "env", operator: "in", values: ["prod", "staging"] },
    { key: "tier", operator: "notin", values: ["db"] },
  ]);
});

Deno.test("`parseLabelSelector()` reads existence and non-existence", () => {
  assert.deepEqual(parseLabelSelector("canary,!legacy, ! old"), [
    { key: "canary", operator: "exists", values: [] },
    { key: "legacy", operator: "!exists", values: [] },
    { key: "old", operator: "!exists", values: [] },
  ]);
});

Deno.test("`parseLabelSelector()` tolerates whitespace between all tokens", () => {
  assert.deepEqual(parseLabelSelector("  a = b ,  c  in  ( x ,  y )  , d != e  "), [
    { key: "a", operator: "=", values: ["b"] },
    { key: "c", operator: "in", values: ["x", "y"] },
    { key: "d", operator: "!=", values: ["e"] },
  ]);
});

Deno.test("`parseLabelSelector()` accepts keys with a DNS prefix", () => {
  assert.deepEqual(parseLabelSelector("app.kubernetes.io/name=web,example.com/x"), [
    { key: "app.kubernetes.io/name", operator: "=", values: ["web"] },
    { key: "example.com/x", operator: "exists", values: [] },
  ]);
});

Deno.test("`parseLabelSelector()` accepts empty values as Kubernetes does", () => {
  assert.deepEqual(parseLabelSelector("a=,b!="), [
    { key: "a", operator: "=", values: [""] },
    { key: "b", operator: "!=", values: [""] },
  ]);
  assert.deepEqual(parseLabelSelector("a in ()"), [{ key: "a", operator: "in", values: [""] }]);
  assert.deepEqual(parseLabelSelector("a in (x,)"), [
    { key: "a", operator: "in", values: ["x", ""] },
  ]);
});

Deno.test("`parseLabelSelector()` treats the words in and notin as values in value position", () => {
  assert.deepEqual(parseLabelSelector("a=in,b in (notin)"), [
    { key: "a", operator: "=", values: ["in"] },
    { key: "b", operator: "in", values: ["notin"] },
  ]);
});

Deno.test("`parseLabelSelector()` removes duplicate values of a set", () => {
  assert.deepEqual(parseLabelSelector("a in (x,y,x)"), [
    { key: "a", operator: "in", values: ["x", "y"] },
  ]);
});

Deno.test("`parseLabelSelector()` accepts values with dots, dashes and underscores", () => {
  assert.deepEqual(parseLabelSelector("v=1.2.3-rc_1"), [
    { key: "v", operator: "=", values: ["1.2.3-rc_1"] },
  ]);
});

function parseError(text: string): SelectorError {
  try {
    parseLabelSelector(text);
  } catch (error) {
    assert.ok(error instanceof SelectorError, `not a SelectorError: ${error}`);
    assert.equal(error.name, "SelectorError");
    assert.ok(!error.message.includes("\n"), "the message must be one line");
    assert.match(error.message, /^unable to parse requirement: /);
    return error;
  }
  assert.fail(`"${text}" parsed without an error`);
}

Deno.test("`parseLabelSelector()` names the bad token of a syntax error", () => {
  assert.match(parseError("a in x").message, /found 'x' at position 5 .* expected: '\('/);
  assert.match(parseError("a in (x y)").message, /found 'y'.*expected: ',' or '\)'/);
  assert.match(parseError("a in (x").message, /found end of string/);
  assert.match(parseError("a b").message, /found 'b'.*expected: '=', '==', '!=', 'in', 'notin'/);
  assert.match(parseError("a=b=c").message, /found '='.*expected: ',' or end of string/);
  assert.match(parseError("a=(b)").message, /found '\('.*expected: a label value/);
});

Deno.test("`parseLabelSelector()` rejects empty requirements", () => {
  assert.match(parseError(",a").message, /found ','.*expected: a label key/);
  assert.match(parseError("a,").message, /found end of string.*expected: a label key/);
  assert.match(parseError("a,,b").message, /found ','/);
  assert.match(parseError("!").message, /found end of string/);
});

Deno.test("`parseLabelSelector()` rejects a keyword where a key belongs", () => {
  assert.match(parseError("in=x").message, /found 'in'.*expected: a label key/);
});

Deno.test("`parseLabelSelector()` rejects invalid keys and values", () => {
  assert.match(parseError("-a=b").message, /invalid label key "-a": the name part must/);
  assert.match(parseError("a/b/c").message, /invalid label key "a\/b\/c".*at most one '\/'/);
  assert.match(parseError("Example.com/a").message, /prefix part must be a lowercase DNS/);
  assert.match(parseError("/a").message, /prefix part must be non-empty/);
  assert.match(parseError("example.com/").message, /name part must be non-empty/);
  assert.match(parseError(`${"k".repeat(64)}=v`).message, /no more than 63 characters/);
  assert.match(parseError("a=-x").message, /invalid value "-x" for label "a"/);
  assert.match(parseError(`a=${"v".repeat(64)}`).message, /no more than 63 characters/);
  assert.match(parseError("a in (ok, b@d)").message, /invalid value "b@d"/);
});

Deno.test("`parseLabelSelector()` reports the unsupported gt/lt operators", () => {
  assert.match(parseError("a>1").message, /operator '>' .* is not supported/);
  assert.match(parseError("a < 1").message, /operator '<' .* is not supported/);
});

Deno.test("`labelSelectorFromObject()` converts matchLabels and matchExpressions", () => {
  assert.deepEqual(
    labelSelectorFromObject({
      matchLabels: { app: "web", "example.com/tier": "fe" },
      matchExpressions: [
        { key: "env", operator: "In", values: ["prod", "prod", "qa"] },
        { key: "zone", operator: "NotIn", values: ["a"] },
        { key: "canary", operator: "Exists" },
        { key: "legacy", operator: "DoesNotExist", values: [] },
      ],
    }),
    [
      { key: "app", operator: "=", values: ["web"] },
      { key: "example.com/tier", operator: "=", values: ["fe"] },
      { key: "env", operator: "in", values: ["prod", "qa"] },
      { key: "zone", operator: "notin", values: ["a"] },
      { key: "canary", operator: "exists", values: [] },
      { key: "legacy", operator: "!exists", values: [] },
    ],
  );
});

Deno.test("`labelSelectorFromObject()` answers an empty selector with no requirements", () => {
  assert.deepEqual(labelSelectorFromObject({}), []);
  assert.deepEqual(labelSelectorFromObject({ matchLabels: {}, matchExpressions: [] }), []);
});

Deno.test("`labelSelectorFromObject()` rejects invalid expressions with SelectorError", () => {
  const bad = (sel: Parameters<typeof labelSelectorFromObject>[0], pattern: RegExp) =>
    assert.throws(() => labelSelectorFromObject(sel), (error: unknown) => {
      assert.ok(error instanceof SelectorError);
      assert.match(error.message, pattern);
      return true;
    });
  bad(
    { matchExpressions: [{ key: "a", operator: "Equals" as "In", values: ["x"] }] },
    /matchExpressions\[0\]: "Equals" is not a valid label selector operator/,
  );
  bad({ matchExpressions: [{ key: "a", operator: "In" }] }, /values must be non-empty for In/);
  bad(
    { matchExpressions: [{ key: "a", operator: "NotIn", values: [] }] },
    /values must be non-empty for NotIn/,
  );
  bad(
    { matchExpressions: [{ key: "a", operator: "Exists", values: ["x"] }] },
    /values must be empty for Exists/,
  );
  bad({ matchLabels: { "-bad": "x" } }, /invalid label key "-bad"/);
  bad({ matchLabels: { good: "-bad" } }, /invalid value "-bad" for label "good"/);
  bad(
    { matchExpressions: [{ key: "a", operator: "In", values: ["ok", "no way"] }] },
    /invalid value "no way"/,
  );
});

Deno.test("`matchesLabels()` evaluates every operator", () => {
  const labels = { app: "web", env: "prod" };
  const check = (selector: string, expected: boolean) =>
    assert.equal(matchesLabels(parseLabelSelector(selector), labels), expected, selector);
  check("app=web", true);
  check("app=db", false);
  check("app!=db", true);
  check("app!=web", false);
  check("env in (qa,prod)", true);
  check("env in (qa)", false);
  check("env notin (qa)", true);
  check("env notin (prod)", false);
  check("app", true);
  check("tier", false);
  check("!tier", true);
  check("!app", false);
  check("app=web,env=prod", true);
  check("app=web,env=qa", false);
});

Deno.test("`matchesLabels()` matches != and notin when the key is absent", () => {
  assert.equal(matchesLabels(parseLabelSelector("tier!=db"), { app: "web" }), true);
  assert.equal(matchesLabels(parseLabelSelector("tier notin (db)"), { app: "web" }), true);
  assert.equal(matchesLabels(parseLabelSelector("tier in (db)"), { app: "web" }), false);
  assert.equal(matchesLabels(parseLabelSelector("tier="), { app: "web" }), false);
});

Deno.test("`matchesLabels()` treats undefined labels as none", () => {
  assert.equal(matchesLabels([], undefined), true);
  assert.equal(matchesLabels(parseLabelSelector("!a,b!=c"), undefined), true);
  assert.equal(matchesLabels(parseLabelSelector("a"), undefined), false);
});

Deno.test("`matchesLabels()` matches everything with an empty selector", () => {
  assert.equal(matchesLabels([], { any: "thing" }), true);
  assert.equal(matchesLabels([], {}), true);
});

Deno.test("`matchesLabels()` looks only at own labels, not inherited properties", () => {
  assert.equal(matchesLabels(parseLabelSelector("constructor"), {}), false);
  assert.equal(matchesLabels(parseLabelSelector("!toString"), {}), true);
});
