/**
 * kubectl against the embedded API server with `authorization: "rbac"`: the
 * administrator grants with kubectl's own commands (`create serviceaccount`,
 * `create role`, `create rolebinding`, `create token`), then kubectl runs as
 * the service account from a kubeconfig holding its token (or with
 * `--token`), and prints kube-apiserver's refusals as it does against a
 * cluster: `Error from server (Forbidden): …`. `auth can-i` and `auth whoami`
 * answer from the same rules. The server serves HTTPS: kubectl sends a bearer
 * token only over TLS (the administrator's kubeconfig holds a client certificate
 * in `system:masters`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { startApiServer } from "../../testing.ts";
import { Kubectl, testEachKubectl } from "./_kubectl.ts";

const SA_USER = "system:serviceaccount:default:op";

testEachKubectl(
  ["1.27", "1.33"],
  `a service account's token — its Role's grants work, the rest is Forbidden as kubectl prints it`,
  async (binary) => {
    // HTTPS: kubectl (client-go) sends bearer tokens only over TLS, never over plain http://.
    await using api = await startApiServer({ authorization: "rbac", tls: true });
    await using admin = await Kubectl.create(binary, api.kubeconfig.path);
    await admin.ok(["create", "namespace", "other"]);
    await admin.ok(["create", "serviceaccount", "op"]);
    await admin.ok([
      "create",
      "role",
      "cm-reader",
      "--verb=get,list,watch",
      "--resource=configmaps",
    ]);
    await admin.ok([
      "create",
      "rolebinding",
      "op-reads",
      "--role=cm-reader",
      "--serviceaccount=default:op",
    ]);
    await admin.ok(["create", "configmap", "cm1", "--from-literal=a=1"]);
    const token = (await admin.ok(["create", "token", "op", "--duration=20m"])).trim();
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    const claims = JSON.parse(atob(token.split(".")[1]!.replaceAll("-", "+").replaceAll("_", "/")));
    assert.equal(claims.exp - claims.iat, 1200);

    const dir = await Deno.makeTempDir({ prefix: "kopf-rbac-kubectl-" });
    try {
      const path = `${dir}/kubeconfig`;
      await Deno.writeTextFile(path, api.kubeconfigFor({ token }));
      await using op = await Kubectl.create(binary, path);

      // Discovery works with no grant of its own (system:discovery), so names resolve.
      assert.match(await op.ok(["get", "configmaps", "-o", "name"]), /^configmap\/cm1$/m);
      assert.equal(await op.ok(["get", "cm", "cm1", "-o", "jsonpath={.data.a}"]), "1");

      const list = await op.fails(["get", "configmaps", "-n", "other"]);
      assert.equal(
        list.stderr,
        `Error from server (Forbidden): configmaps is forbidden: User "${SA_USER}" cannot list resource "configmaps" in API group "" in the namespace "other"\n`,
      );
      const get = await op.fails(["get", "namespace", "other"]);
      assert.equal(
        get.stderr,
        `Error from server (Forbidden): namespaces "other" is forbidden: User "${SA_USER}" cannot get resource "namespaces" in API group "" in the namespace "other"\n`,
      );
      const cluster = await op.fails(["get", "namespaces"]);
      assert.equal(
        cluster.stderr,
        `Error from server (Forbidden): namespaces is forbidden: User "${SA_USER}" cannot list resource "namespaces" in API group "" at the cluster scope\n`,
      );
      const create = await op.fails(["create", "configmap", "cm2"]);
      assert.match(
        create.stderr,
        new RegExp(
          `configmaps is forbidden: User "${SA_USER}" cannot create resource "configmaps" in API group "" in the namespace "default"\\n$`,
        ),
      );
      const del = await op.fails(["delete", "configmap", "cm1"]);
      assert.equal(
        del.stderr,
        `Error from server (Forbidden): configmaps "cm1" is forbidden: User "${SA_USER}" cannot delete resource "configmaps" in API group "" in the namespace "default"\n`,
      );

      // --token replaces a kubeconfig's token (here a wrong one). (With a client certificate in
      // the kubeconfig, the certificate would win, as kube-apiserver checks it first.)
      await Deno.writeTextFile(`${dir}/wrong`, api.kubeconfigFor({ token: "wrong" }));
      await using wrong = await Kubectl.create(binary, `${dir}/wrong`);
      const unauthorized = await wrong.fails(["get", "secrets"]);
      assert.match(
        unauthorized.stderr,
        /^error: You must be logged in to the server \(the server has asked for the client to provide credentials\)$/m,
      );
      const viaFlag = await wrong.fails(["--token", token, "get", "secrets"]);
      assert.equal(
        viaFlag.stderr,
        `Error from server (Forbidden): secrets is forbidden: User "${SA_USER}" cannot list resource "secrets" in API group "" in the namespace "default"\n`,
      );

      // auth can-i and whoami ask the server (SelfSubjectAccessReview, SelfSubjectReview).
      assert.equal(await op.ok(["auth", "can-i", "list", "configmaps"]), "yes\n");
      assert.equal(await op.ok(["auth", "can-i", "watch", "configmaps"]), "yes\n");
      const cannot = await op.fails(["auth", "can-i", "create", "configmaps"]);
      assert.equal(cannot.stdout, "no\n");
      assert.equal(
        (await op.fails(["auth", "can-i", "list", "configmaps", "-n", "other"])).stdout,
        "no\n",
      );
      const rules = await op.ok(["auth", "can-i", "--list"]);
      assert.match(rules, /^configmaps\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
      assert.match(rules, /^\s+\[\/apis\/\*\]\s+\[\]\s+\[get\]$/m);
      if (binary.label !== "kubectl 1.27") {
        const whoami = await op.ok(["auth", "whoami"]);
        assert.match(whoami, new RegExp(`^Username\\s+${SA_USER}$`, "m"));
        assert.match(
          whoami,
          /^Groups\s+\[system:serviceaccounts system:serviceaccounts:default system:authenticated\]$/m,
        );
      }

      // The administrator asks as the service account (impersonation: --as), as one checks RBAC.
      const as = `--as=${SA_USER}`;
      assert.equal(await admin.ok(["auth", "can-i", "list", "configmaps", as]), "yes\n");
      assert.equal((await admin.fails(["auth", "can-i", "get", "secrets", as])).stdout, "no\n");
      assert.equal(
        (await admin.fails(["get", "secrets", as])).stderr,
        `Error from server (Forbidden): secrets is forbidden: User "${SA_USER}" cannot list resource "secrets" in API group "" in the namespace "default"\n`,
      );
      // …which the service account itself may not do.
      assert.equal(
        (await op.fails(["get", "configmaps", "--as=alice"])).stderr,
        `Error from server (Forbidden): users "alice" is forbidden: User "${SA_USER}" cannot impersonate resource "users" in API group "" at the cluster scope\n`,
      );

      // A watch is authorised as watch: `get -w` streams.
      await using watch = op.watch(["get", "configmaps", "-w", "--no-headers"]);
      await watch.until((lines) => lines.some((l) => l.startsWith("cm1")));
      await admin.ok(["create", "configmap", "cm3"]);
      await watch.until((lines) => lines.some((l) => l.startsWith("cm3")));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
