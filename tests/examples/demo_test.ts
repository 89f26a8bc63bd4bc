import assert from "node:assert/strict";
import { ROOT } from "./_setup.ts";

Deno.test("`deno task demo`: the operator handles creation, update and deletion, and exits 0", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `--config=${ROOT}deno.json`, `${ROOT}examples/demo.ts`],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, text + new TextDecoder().decode(out.stderr));
  for (
    const line of [
      "Handler 'create_fn' succeeded.",
      "All handlers succeeded for creation.",
      "Handler 'updateFn' succeeded.",
      "All handlers succeeded for update.",
      "Handler 'deleteFn' succeeded.",
      "All handlers succeeded for deletion.",
      "the operator exited with code 0",
    ]
  ) assert.ok(text.includes(line), `missing: ${line}\n${text}`);
});
