/**
 * Credentials: what login handlers return ({@link ConnectionInfo}) and where
 * the operator keeps them ({@link Vault}).
 *
 * Why a vault and not one "current config": an operator may have several
 * login handlers (a kubeconfig, a service account, a custom token service),
 * credentials expire, and a 401 from the API must lead to a re-login without
 * failing every task that happened to be mid-request. The vault keeps all the
 * credentials by the id of the login handler that produced them; API clients
 * take the best one (highest priority), report it back as invalid on a 401,
 * and wait while the operator's authenticator runs the login handlers again.
 * Credentials once found invalid are not taken back from the same handler, so
 * a handler that keeps returning a rejected token cannot cause an endless
 * re-login loop: the vault runs dry and the API calls fail with a
 * {@link LoginError} instead.
 *
 * The vault also caches per-credentials objects (HTTP clients with their TLS
 * material) and closes them when the credentials leave it.
 *
 * Where they live: the errors in `login_errors.ts`, the credentials in
 * `connection_info.ts`, the vault in `vault.ts`; this file re-exports them.
 *
 * @module
 */

export { ConnectionInfo, type ConnectionInfoInit, type PemData } from "./connection_info.ts";
export { AccessError, LoginError } from "./login_errors.ts";
export {
  Vault,
  type VaultEntry,
  type VaultKey,
  type VaultOptions,
  type VaultSource,
} from "./vault.ts";
