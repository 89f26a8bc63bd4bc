/**
 * coordination.k8s.io/v1 Leases with client-go's semantics: the shared state
 * of leader election (one Lease) and of sharding (a Lease per member).
 *
 * Why client-go's rules and not our own: a Lease is read by other programs —
 * `kubectl get lease`, controller-runtime operators sharing a name, people
 * debugging at 3 a.m. — so its fields mean what they mean there:
 * `holderIdentity`, `leaseDurationSeconds`, `acquireTime` and `renewTime` as
 * RFC 3339 micro time (`2006-01-02T15:04:05.000000Z`), and `leaseTransitions`
 * bumped when the holder changes.
 *
 * Why the *observed* time and not `renewTime`: clocks of replicas differ.
 * client-go never compares the remote timestamp with its own clock; it notes
 * on its own (monotonic) clock when it last saw the record *change*, and calls
 * the lease free once `leaseDurationSeconds` have passed since then with no
 * change. A holder that renews changes `renewTime`, so a live holder is always
 * seen as live; a dead one is seen as dead one lease duration after whoever
 * looks first noticed its last renewal — never earlier than the holder itself
 * could have renewed. {@link LeaseObservation} keeps that rule; sharding keeps
 * one per member Lease.
 *
 * Writes use the resourceVersion last read or written (optimistic
 * concurrency): of two replicas that race for a free lease, one update
 * succeeds and the other gets a 409 and stays a candidate.
 *
 * Release follows client-go's `ReleaseOnCancel`: the holder writes an empty
 * `holderIdentity`, `leaseDurationSeconds: 1` and `renewTime: now`, so any
 * candidate may take it at its next try instead of waiting out the duration.
 *
 * The Lease object and its I/O are in `lease_records.ts`; the lock of one Lease
 * ({@link LeaseLock}, {@link LeaseObservation}) in `lease_lock.ts`.
 *
 * @module
 */

export {
  formatMicroTime,
  type Lease,
  type LeaseRecord,
  leaseRecordOf,
  LEASES,
  leaseSpecOf,
  listLeases,
  readLease,
  updateLease,
} from "./lease_records.ts";
export { LeaseLock, type LeaseLockOptions, LeaseObservation } from "./lease_lock.ts";
