/**
 * The cluster's identity in the Linode account: the UID of its `kube-system` Namespace, which no other cluster
 * shares (unlike `--cluster-name`, which defaults to `kubernetes` in every cluster). It is written on every
 * NodeBalancer this CCM makes or adopts as the tag `ccm-cluster:<32 hex digits>`, and only a NodeBalancer
 * carrying it may be deleted as an orphan. Until it is read, nothing is created and no orphan is deleted.
 */

/** What every cluster identity tag starts with. */
export const CLUSTER_TAG_PREFIX = "ccm-cluster:";

/** The Namespace whose UID names the cluster: created with the cluster, never deleted. */
export const IDENTITY_NAMESPACE = "kube-system";

/** The identity could not be read: creating or cleaning up now could mix clusters, so retry. */
export class ClusterIdentityUnknownError extends Error {
  override name = "ClusterIdentityUnknownError";
}

/** The tag naming the cluster whose `kube-system` Namespace has `uid`; throws RangeError for a UID without 32 hex digits. */
export function clusterTag(uid: string): string {
  const hex = uid.toLowerCase().replace(/[^0-9a-f]/g, "");
  if (hex.length !== 32) throw new RangeError(`Invalid Namespace UID ${JSON.stringify(uid)}`);
  return `${CLUSTER_TAG_PREFIX}${hex}`;
}

/** The cluster identity tags among `tags` (normally none or one). */
export function clusterTagsOf(tags: readonly string[]): string[] {
  return tags.filter((t) => t.startsWith(CLUSTER_TAG_PREFIX));
}

/** Reads the `kube-system` Namespace's UID. */
export interface NamespaceUidReader {
  namespaceUid(name: string): Promise<string>;
}

/** The cluster identity, read once per process (a Namespace's UID never changes) and retried until read. */
export class ClusterIdentity {
  readonly #reader: NamespaceUidReader;
  #tag: string | undefined;

  constructor(reader: NamespaceUidReader) {
    this.#reader = reader;
  }

  /** The identity tag when already read, else undefined (no request). */
  known(): string | undefined {
    return this.#tag;
  }

  /** The identity tag; throws `ClusterIdentityUnknownError` while the Namespace cannot be read. */
  async tag(): Promise<string> {
    if (this.#tag) return this.#tag;
    let uid: string;
    try {
      uid = await this.#reader.namespaceUid(IDENTITY_NAMESPACE);
    } catch (e) {
      throw new ClusterIdentityUnknownError(
        `Cannot read the cluster identity (Namespace ${IDENTITY_NAMESPACE}): nothing is created or cleaned up until it is read`,
        { cause: e },
      );
    }
    try {
      this.#tag = clusterTag(uid);
    } catch (e) {
      throw new ClusterIdentityUnknownError(`Namespace ${IDENTITY_NAMESPACE} has no usable UID`, {
        cause: e,
      });
    }
    return this.#tag;
  }
}
