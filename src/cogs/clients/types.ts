/**
 * The raw shapes that come over the wire: object bodies and watch events,
 * typed just enough for the clients to find names and resourceVersions.
 * Richer views of bodies (spec, status, meta accessors) belong to the layers
 * above; these types are structural, so those views can accept them as is.
 * A reference to an object (events' `involvedObject`) is the structs' one.
 *
 * @module
 */

/** An object's metadata, as far as the clients read it. */
export interface RawMeta {
  /** The object's name. */
  name?: string;
  /** The namespace (absent for cluster-scoped objects). */
  namespace?: string;
  /** The object's uid. */
  uid?: string;
  /** The resourceVersion. */
  resourceVersion?: string;
  /** Any other metadata. */
  [key: string]: unknown;
}

/** An object body as the API returns it. */
export interface RawBody {
  /** e.g. `kopf.dev/v1`. */
  apiVersion?: string;
  /** e.g. `KopfExample`. */
  kind?: string;
  /** The metadata. */
  metadata?: RawMeta;
  /** Anything else: spec, status, data, … */
  [key: string]: unknown;
}
