/**
 * Which Cloud Storage requests are safe to send twice, as one table.
 *
 * Source: Cloud Storage, "Retry strategy" (https://cloud.google.com/storage/docs/retry-strategy),
 * its section on the idempotency of operations. It sorts the JSON API methods into three groups:
 *
 * - always idempotent: all get and list requests; inserting or deleting buckets; testing bucket
 *   IAM permissions; locking retention policies; deleting HMAC keys or Pub/Sub notifications;
 * - conditionally idempotent: bucket and object update/patch with `ifMetagenerationMatch` or an
 *   etag; setting a bucket's IAM policy or updating an HMAC key with an etag; object
 *   insert/copy/compose/rewrite with `ifGenerationMatch`; object delete with
 *   `ifGenerationMatch` or a generation number;
 * - never idempotent: creating an HMAC key or a Pub/Sub notification (each call mints a new
 *   one); creating, deleting, patching or updating bucket, object and default object ACLs.
 *
 * A row is `'always'`, `'never'`, or, for a conditional operation, the preconditions of which
 * any one makes it safe. Fields not listed do not help: a bucket has no object generation, and
 * `ifSourceGenerationMatch` on a copy guards the source, not the write.
 *
 * @module
 */

/**
 * The request preconditions that can turn a conditionally idempotent operation into an
 * idempotent one. Names follow the JSON API query parameters. Generation numbers are 64-bit
 * integers, so besides a `number` (up to `Number.MAX_SAFE_INTEGER`) they may be given as a
 * decimal string or a `bigint`. A field set to `undefined` or `null` counts as absent.
 *
 * @example
 * const createIfAbsent: GcsPreconditions = { ifGenerationMatch: 0 };
 * const thatVersion: GcsPreconditions = { generation: '1700000000000001' };
 */
export interface GcsPreconditions {
  /**
   * Apply the request only if the object's current generation equals this value. `0` is
   * meaningful: "only if no live object exists yet", which makes a create safe to resend.
   * For `objects.copy` / `objects.rewrite` it is the destination's generation.
   */
  ifGenerationMatch?: number | string | bigint;
  /**
   * Apply the request only if the bucket's or object's metadata generation equals this
   * value, so a resent patch cannot overwrite someone else's later change.
   */
  ifMetagenerationMatch?: number | string | bigint;
  /**
   * The resource's ETag, sent as an HTTP precondition or in the request body (an IAM
   * policy's or HMAC key's `etag`). An empty string counts as absent.
   */
  etag?: string;
  /**
   * The exact object generation (version) a request addresses. Naming a version makes
   * `objects.delete` idempotent: that version can only be deleted once.
   */
  generation?: number | string | bigint;
}

/** A precondition's name. */
export type PreconditionField = keyof GcsPreconditions;

/** A row: a fixed class, or the preconditions of which any one makes the operation safe. */
export type GcsRow = 'always' | 'never' | readonly PreconditionField[];

// Shared lists: a bundler keeps one copy of each, the table refers to it.
const GENERATION = ['ifGenerationMatch'] as const;
const METAGENERATION_OR_ETAG = ['ifMetagenerationMatch', 'etag'] as const;
const ETAG = ['etag'] as const;
const GENERATION_OR_VERSION = ['ifGenerationMatch', 'generation'] as const;

/*
 * The table. Names are the API reference's `resource.method`, without the `projects.` of
 * `projects.hmacKeys.*` and `projects.serviceAccount.get` (as the reference's page titles).
 * `satisfies` checks every row; `as const` keeps the keys for GcsOperation.
 */
export const GCS_TABLE = {
  'buckets.get': 'always',
  'buckets.list': 'always',
  'buckets.insert': 'always',
  'buckets.delete': 'always',
  'buckets.getIamPolicy': 'always',
  'buckets.testIamPermissions': 'always',
  'buckets.lockRetentionPolicy': 'always',
  'buckets.patch': METAGENERATION_OR_ETAG,
  'buckets.update': METAGENERATION_OR_ETAG,
  'buckets.setIamPolicy': ETAG,

  'objects.get': 'always',
  'objects.list': 'always',
  'objects.insert': GENERATION,
  'objects.copy': GENERATION,
  'objects.compose': GENERATION,
  'objects.rewrite': GENERATION,
  'objects.delete': GENERATION_OR_VERSION,
  'objects.patch': METAGENERATION_OR_ETAG,
  'objects.update': METAGENERATION_OR_ETAG,

  'hmacKeys.get': 'always',
  'hmacKeys.list': 'always',
  'hmacKeys.delete': 'always',
  'hmacKeys.update': ETAG,
  'hmacKeys.create': 'never',

  'notifications.get': 'always',
  'notifications.list': 'always',
  'notifications.delete': 'always',
  'notifications.insert': 'never',

  'bucketAccessControls.get': 'always',
  'bucketAccessControls.list': 'always',
  'bucketAccessControls.insert': 'never',
  'bucketAccessControls.delete': 'never',
  'bucketAccessControls.patch': 'never',
  'bucketAccessControls.update': 'never',
  'objectAccessControls.get': 'always',
  'objectAccessControls.list': 'always',
  'objectAccessControls.insert': 'never',
  'objectAccessControls.delete': 'never',
  'objectAccessControls.patch': 'never',
  'objectAccessControls.update': 'never',
  'defaultObjectAccessControls.get': 'always',
  'defaultObjectAccessControls.list': 'always',
  'defaultObjectAccessControls.insert': 'never',
  'defaultObjectAccessControls.delete': 'never',
  'defaultObjectAccessControls.patch': 'never',
  'defaultObjectAccessControls.update': 'never',

  'serviceAccount.get': 'always',
} as const satisfies Record<string, GcsRow>;

/**
 * A Cloud Storage JSON API method, spelled as the API reference names it
 * (`resource.method`, e.g. `objects.insert`): one of the rows of Cloud Storage's idempotency
 * table; see {@link GCS_OPERATIONS} for the runtime list.
 *
 * @example
 * const operation: GcsOperation = 'objects.insert';
 * gcs({ operation, preconditions: { ifGenerationMatch: 0 } });
 */
export type GcsOperation = keyof typeof GCS_TABLE;

/**
 * Every operation the table classifies, in table order (grouped by resource). Frozen, so it
 * can be shared safely; handy for documentation and for exhaustive tests.
 *
 * @example
 * GCS_OPERATIONS.filter((op) => gcsIdempotency(op) === 'never'); // ['hmacKeys.create', …]
 */
export const GCS_OPERATIONS: readonly GcsOperation[] = /* @__PURE__ */ Object.freeze(
  /* @__PURE__ */ Object.keys(GCS_TABLE) as GcsOperation[],
);
