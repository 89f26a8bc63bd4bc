/**
 * The data directory (`--data-dir`) never loses an acknowledged write and never becomes
 * unloadable: a torn tail is cut off on load, a write the disk refuses is never visible, the log
 * is compacted while running and read line by line, files are owner-only, and a write is
 * answered only once it is durable. Real server over HTTP, real files; a crash is the data
 * directory copied while the server runs (what a kill -9 leaves: the page cache's view), or a
 * real kill -9 (data_dir_soak_test.ts).
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { DataDir } from "../../src/apiserver/storage/persistence.ts";
import { kill9, startServer } from "../soak/_data_soak.ts";

const CM = "/api/v1/namespaces/default/configmaps";

async function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> & { metadata?: { name?: string } } }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: await res.json() };
}

/** What a kill -9 would leave of `dir` right now: a copy of its files. */
function crashCopy(dir: string): string {
  const copy = Deno.makeTempDirSync({ prefix: "kopf-crash-" });
  for (const entry of Deno.readDirSync(dir)) {
    if (entry.isFile) Deno.copyFileSync(`${dir}/${entry.name}`, `${copy}/${entry.name}`);
  }
  return copy;
}

const quiet = { warn: () => {} };

/** Waits (a few seconds at most) until `done()`; fails by name when it never is. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 5000 && !done(); i++) await new Promise((r) => setTimeout(r, 1));
  if (!done()) throw new Error(`never happened: ${what}`);
}

async function mountTmpfs(dir: string, size: string): Promise<boolean> {
  try {
    const out = await new Deno.Command("mount", {
      args: ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  }
}

async function umount(dir: string): Promise<void> {
  await new Deno.Command("umount", { args: ["-l", dir], stdout: "null", stderr: "null" }).output();
}

const canMount = await (async () => {
  const probe = await Deno.makeTempDir();
  const ok = await mountTmpfs(probe, "64k");
  if (ok) await umount(probe);
  await Deno.remove(probe);
  return ok;
})();

Deno.test("data dir: a torn last line is cut off on load, so later writes survive the next restarts", async () => {
  const dir = await Deno.makeTempDir();
  let crashed = "";
  try {
    {
      await using api = await startApiServer({ dataDir: dir });
      assert.equal((await call(api.url, "POST", CM, { metadata: { name: "a" } })).status, 201);
      // A crash mid-append: half a line, no newline (as kill -9 or ENOSPC leaves it).
      crashed = crashCopy(dir);
      const log = await Deno.open(`${crashed}/changes.jsonl`, { append: true });
      await log.write(new TextEncoder().encode('{"type":"ADDED","key":"configmaps","rv":9'));
      log.close();
    }
    let again = "";
    // The torn tail is named in one notice (on stderr by default; caught here).
    const notices: string[] = [];
    {
      // Restart 1: loads, and the writes after it are appended on a fresh line.
      await using api = await startApiServer({
        dataDir: crashed,
        log: (line) => void notices.push(line),
      });
      assert.equal((await call(api.url, "GET", `${CM}/a`)).status, 200);
      assert.equal((await call(api.url, "POST", CM, { metadata: { name: "b" } })).status, 201);
      assert.equal((await call(api.url, "POST", CM, { metadata: { name: "c" } })).status, 201);
      again = crashCopy(crashed);
    }
    assert.equal(notices.length, 1, notices.join("\n"));
    assert.match(
      notices[0]!,
      /changes\.jsonl: dropped a torn last change \(41 bytes, never acknowledged/,
    );
    // Restart 2 (after a second crash): every acknowledged write is there.
    try {
      const store = new DataDir(again, quiet).load();
      for (const name of ["a", "b", "c"]) {
        assert.ok(store.get("configmaps", "default", name), `${name} survives`);
      }
    } finally {
      await Deno.remove(again, { recursive: true });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
    if (crashed) await Deno.remove(crashed, { recursive: true });
  }
});

Deno.test("data dir: a damaged line with changes after it is one line naming file:line and the fix", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const line = (name: string, rv: number) =>
      JSON.stringify({
        type: "ADDED",
        key: "configmaps",
        rv,
        object: { metadata: { name, namespace: "default", resourceVersion: String(rv) } },
      }) + "\n";
    await Deno.writeTextFile(
      `${dir}/changes.jsonl`,
      line("a", 1) + '{"type":"ADD\n' + line("b", 2),
    );
    let message = "";
    try {
      new DataDir(dir, quiet).load();
    } catch (e) {
      message = (e as Error).message;
    }
    assert.equal(message.split("\n").length, 1, message);
    assert.match(message, new RegExp(`^${dir}/changes\\.jsonl:2 is damaged`));
    assert.match(message, /move the data directory away/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "data dir: a write the full disk refuses is a 500 naming the directory, never visible before or after a restart" +
    (canMount ? "" : " (not run: cannot mount a small tmpfs here — needs root or CAP_SYS_ADMIN)"),
  ignore: !canMount,
  async fn() {
    const mnt = await Deno.makeTempDir();
    assert.ok(await mountTmpfs(mnt, "1m"));
    const dir = `${mnt}/data`;
    try {
      await using api = await startApiServer({ dataDir: dir, log: () => {} });
      assert.equal((await call(api.url, "POST", CM, { metadata: { name: "small" } })).status, 201);
      // Fill the disk, then free 64 KiB: a 300 KiB object is written in part, then ENOSPC.
      const filler = await Deno.open(`${mnt}/filler`, { write: true, create: true });
      const zeros = new Uint8Array(64 * 1024);
      try {
        for (;;) await filler.write(zeros);
      } catch (e) {
        assert.match((e as Error).message, /No space left|os error 28/);
      }
      await filler.truncate((await filler.stat()).size - 64 * 1024);
      filler.close();
      const logBefore = (await Deno.stat(`${dir}/changes.jsonl`)).size;
      const rvBefore = api.server.store.resourceVersion;
      const big = { metadata: { name: "big" }, data: { x: "x".repeat(300 * 1024) } };
      const refused = await call(api.url, "POST", CM, big);
      assert.equal(refused.status, 500);
      // Never visible: not served, not counted, and the log holds no part of it.
      assert.equal((await call(api.url, "GET", `${CM}/big`)).status, 404);
      assert.equal(refused.body.kind, "Status");
      assert.match(String(refused.body.message), new RegExp(`data directory ${dir}`));
      assert.match(String(refused.body.message), /No space left on device/);
      assert.equal(api.server.store.resourceVersion, rvBefore);
      assert.equal((await Deno.stat(`${dir}/changes.jsonl`)).size, logBefore);
      // A write that fits is stored on a fresh line, and a restart loads both right.
      assert.equal((await call(api.url, "POST", CM, { metadata: { name: "after" } })).status, 201);
      const crashed = crashCopy(dir);
      try {
        const store = new DataDir(crashed, quiet).load();
        assert.ok(store.get("configmaps", "default", "small"));
        assert.ok(store.get("configmaps", "default", "after"));
        assert.equal(store.get("configmaps", "default", "big"), undefined);
      } finally {
        await Deno.remove(crashed, { recursive: true });
      }
      await Deno.remove(`${mnt}/filler`);
    } finally {
      await umount(mnt);
      await Deno.remove(mnt, { recursive: true });
    }
  },
});

Deno.test("data dir: the log is compacted while running (100 updates of a 1 MiB ConfigMap), and a crash then loads", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await using api = await startApiServer({ dataDir: dir });
    const data = { x: "y".repeat(1024 * 1024 - 200) };
    assert.equal(
      (await call(api.url, "POST", CM, { metadata: { name: "big" }, data })).status,
      201,
    );
    for (let i = 0; i < 100; i++) {
      const res = await call(api.url, "PUT", `${CM}/big`, {
        metadata: { name: "big", labels: { i: String(i) } },
        data,
      });
      assert.equal(res.status, 200);
    }
    // Without compaction the log would hold ~100 MiB; with it, at most the 64 MiB threshold.
    const logSize = (await Deno.stat(`${dir}/changes.jsonl`)).size;
    assert.ok(logSize <= 64 * 1024 * 1024 + 2 * 1024 * 1024, `log is ${logSize} bytes`);
    const crashed = crashCopy(dir);
    try {
      const store = new DataDir(crashed, quiet).load();
      assert.equal(store.get("configmaps", "default", "big")?.metadata.labels?.i, "99");
    } finally {
      await Deno.remove(crashed, { recursive: true });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("data dir: a change log over V8's largest string (600 MiB) loads, line by line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = await Deno.open(`${dir}/changes.jsonl`, { write: true, create: true });
    const payload = "z".repeat(1024 * 1024);
    const enc = new TextEncoder();
    for (let rv = 1; rv <= 600; rv++) {
      const line = JSON.stringify({
        type: rv === 1 ? "ADDED" : "MODIFIED",
        key: "configmaps",
        rv,
        object: {
          metadata: { name: "big", namespace: "default", resourceVersion: String(rv) },
          data: { x: payload },
        },
      }) + "\n";
      const bytes = enc.encode(line);
      let written = 0;
      while (written < bytes.length) written += await file.write(bytes.subarray(written));
    }
    file.close();
    const store = new DataDir(dir, quiet).load();
    assert.equal(store.resourceVersion, 600);
    assert.equal(store.get("configmaps", "default", "big")?.metadata.resourceVersion, "600");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("data dir: created 0700, files 0600; an earlier version's 0644 files are tightened on load", async () => {
  const parent = await Deno.makeTempDir();
  const dir = `${parent}/data`;
  try {
    {
      await using api = await startApiServer({ dataDir: dir });
      assert.equal((await call(api.url, "POST", CM, { metadata: { name: "a" } })).status, 201);
      assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
      assert.equal((await Deno.stat(`${dir}/changes.jsonl`)).mode! & 0o777, 0o600);
    }
    assert.equal((await Deno.stat(`${dir}/snapshot.jsonl`)).mode! & 0o777, 0o600);
    await Deno.chmod(`${dir}/snapshot.jsonl`, 0o644);
    await Deno.chmod(`${dir}/changes.jsonl`, 0o644);
    {
      await using api = await startApiServer({ dataDir: dir });
      assert.equal((await call(api.url, "GET", `${CM}/a`)).status, 200);
      assert.equal((await Deno.stat(`${dir}/snapshot.jsonl`)).mode! & 0o777, 0o600);
      assert.equal((await Deno.stat(`${dir}/changes.jsonl`)).mode! & 0o777, 0o600);
    }
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});

Deno.test("data dir: a write is answered only after its fdatasync; a failed one answers 500 and refuses later writes", async () => {
  const dir = await Deno.makeTempDir();
  const original = Deno.FsFile.prototype.syncData;
  const held: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  Deno.FsFile.prototype.syncData = function () {
    return new Promise<void>((resolve, reject) => held.push({ resolve, reject }));
  };
  try {
    await using api = await startApiServer({ dataDir: dir });
    let answered = false;
    const post = call(api.url, "POST", CM, { metadata: { name: "a" } }).then((r) => {
      answered = true;
      return r;
    });
    // The change is committed (another client reads it), the fdatasync is running: no answer yet.
    while ((await call(api.url, "GET", `${CM}/a`)).status !== 200) { /* until committed */ }
    await until(() => held.length > 0, "the fdatasync of the first write started");
    assert.equal(answered, false, "answered before the fdatasync");
    held.shift()!.resolve();
    assert.equal((await post).status, 201);
    // An fdatasync that fails: the writer hears 500, and the directory refuses later writes.
    const second = call(api.url, "POST", CM, { metadata: { name: "b" } });
    await until(() => held.length > 0, "the fdatasync of the second write started");
    held.shift()!.reject(new Error("Input/output error (os error 5)"));
    const failed = await second;
    assert.equal(failed.status, 500);
    assert.match(String(failed.body.message), /could not make the change durable.*os error 5/);
    const refused = await call(api.url, "POST", CM, { metadata: { name: "c" } });
    assert.equal(refused.status, 500);
    assert.equal((await call(api.url, "GET", `${CM}/c`)).status, 404);
  } finally {
    Deno.FsFile.prototype.syncData = original;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("data dir: compaction crash points each load the same state (snapshot renamed, log not yet cut)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const data = new DataDir(dir, { ...quiet, compactBytes: 2000 });
    const store = data.load();
    data.attach(store);
    for (let i = 0; i < 40; i++) {
      store.commit(i ? "MODIFIED" : "ADDED", "configmaps", {
        metadata: { name: "a", namespace: "default", labels: { i: String(i) } },
        data: { x: "p".repeat(200) },
      });
      // The state a crash between rename and truncation leaves: new snapshot, old log.
      const crashed = crashCopy(dir);
      const again = new DataDir(crashed, quiet).load();
      assert.equal(again.get("configmaps", "default", "a")?.metadata.labels?.i, String(i));
      assert.equal(again.resourceVersion, i + 1);
      await Deno.remove(crashed, { recursive: true });
    }
    assert.ok(data.compactions > 0);
    // A snapshot with a log whose lines it already holds (rv <= the snapshot's): skipped.
    const snapshotRv = store.resourceVersion;
    data.close(store);
    const log = await Deno.readTextFile(`${dir}/changes.jsonl`);
    assert.equal(log, "");
    await Deno.writeTextFile(
      `${dir}/changes.jsonl`,
      JSON.stringify({
        type: "DELETED",
        key: "configmaps",
        rv: snapshotRv,
        object: { metadata: { name: "a", namespace: "default" } },
      }) + "\n",
    );
    assert.ok(new DataDir(dir, quiet).load().get("configmaps", "default", "a"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("data dir: `kopf apiserver --data-dir` on a damaged log says so in one line (no stack trace) and exits", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const good = (rv: number) =>
      JSON.stringify({
        type: "ADDED",
        key: "configmaps",
        rv,
        object: { metadata: { name: `n${rv}`, namespace: "default" } },
      }) + "\n";
    await Deno.mkdir(`${dir}/data`);
    await Deno.writeTextFile(`${dir}/data/changes.jsonl`, good(1) + "garbage\n" + good(2));
    let message = "";
    try {
      const server = await startServer(`${dir}/data`);
      await kill9(server);
    } catch (e) {
      message = (e as Error).message;
    }
    const stderr = message.replace(/^the server did not start \(it did not load\?\): /, "");
    assert.equal(stderr.split("\n").length, 1, stderr);
    assert.equal(
      stderr,
      `kopf: --data-dir ${dir}/data/changes.jsonl:2 is damaged (not a change, yet changes follow ` +
        `it): cut the file before that line to keep the changes before it, or move the data ` +
        `directory away to start empty`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("data dir: a snapshot is fsynced, then renamed into place, then the directory fsynced", async () => {
  const dir = await Deno.makeTempDir();
  const syncSync = Deno.FsFile.prototype.syncSync;
  const renameSync = Deno.renameSync;
  const order: string[] = [];
  Deno.FsFile.prototype.syncSync = function (this: Deno.FsFile) {
    order.push(this.statSync().isDirectory ? "fsync dir" : "fsync file");
    return syncSync.call(this);
  };
  Deno.renameSync = (from, to) => {
    order.push(`rename ${String(from).split("/").pop()} ${String(to).split("/").pop()}`);
    renameSync(from, to);
  };
  try {
    const data = new DataDir(dir, quiet);
    const store = data.load();
    data.attach(store);
    store.commit("ADDED", "configmaps", { metadata: { name: "a", namespace: "default" } });
    order.length = 0;
    data.close(store);
    assert.deepEqual(order, [
      "fsync file",
      "rename snapshot.jsonl.tmp snapshot.jsonl",
      "fsync dir",
    ]);
  } finally {
    Deno.FsFile.prototype.syncSync = syncSync;
    Deno.renameSync = renameSync;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("data directory: Pods written with their kept spec and status texts load back as served, a torn last line included", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kopf-data-pods-" });
  const PODS = "/api/v1/namespaces/default/pods";
  const pod = (name: string) => ({
    metadata: { name, labels: { app: "x" } },
    spec: { containers: [{ name: "main", image: "nginx:1.27", ports: [{ containerPort: 80 }] }] },
  });
  let served: Record<string, unknown>[] = [];
  let crashed = "";
  try {
    {
      await using api = await startApiServer({ dataDir: dir, log: () => {} });
      for (const name of ["a", "b", "c"]) {
        assert.equal((await call(api.url, "POST", PODS, pod(name))).status, 201);
      }
      // The same spec for all three (one kept text), one Pod patched after.
      const patch = { metadata: { labels: { app: "y" } } };
      const res = await fetch(`${api.url}${PODS}/b`, {
        method: "PATCH",
        headers: { "content-type": "application/merge-patch+json" },
        body: JSON.stringify(patch),
      });
      assert.equal(res.status, 200);
      await res.body?.cancel();
      served = (await call(api.url, "GET", PODS)).body.items as Record<string, unknown>[];
      // What a kill -9 mid-append leaves: the files so far and half a line more.
      crashed = crashCopy(dir);
      const log = [...Deno.readDirSync(crashed)].find((e) => e.name.endsWith(".jsonl"));
      assert.ok(log, "a log file in the data directory");
      Deno.writeTextFileSync(`${crashed}/${log.name}`, '{"type":"ADDED","key":', { append: true });
    }
    for (const from of [dir, crashed]) {
      await using api = await startApiServer({ dataDir: from, log: () => {} });
      const items = (await call(api.url, "GET", PODS)).body.items as Record<string, unknown>[];
      assert.deepEqual(
        items,
        served,
        `${from === dir ? "the data directory" : "after a torn line"}`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    if (crashed) await Deno.remove(crashed, { recursive: true }).catch(() => {});
  }
});
