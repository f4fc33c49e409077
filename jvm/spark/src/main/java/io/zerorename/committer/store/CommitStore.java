package io.zerorename.committer.store;

import java.io.Closeable;
import java.io.IOException;
import java.util.Collection;
import java.util.List;

/**
 * Every request the fenced committer makes, on one bucket (the destination's): the facade the
 * stages reach the store through, so that each request is counted and a test can put an
 * in-memory store or a faulty one in its place. Keys are the store's keys, never URLs.
 *
 * <p>The two conditional requests are the committer's decisions: {@link #put} and
 * {@link #complete} with {@code ifNoneMatch} create a key only if it does not exist, and throw
 * {@link PreconditionFailedException} (412) when it does.
 */
public interface CommitStore extends Closeable {

  /** A short name for logs and {@code _SUCCESS}: the endpoint and bucket. */
  String name();

  /** PUT {@code data} at {@code key}; with {@code ifNoneMatch}, only if {@code key} is absent. */
  void put(String key, byte[] data, boolean ifNoneMatch) throws IOException;

  /** GET; {@link java.io.FileNotFoundException} when absent. */
  byte[] get(String key) throws IOException;

  /** HEAD; null when absent. */
  ObjectEntry head(String key) throws IOException;

  /** Delete these keys (absent ones are not an error). */
  void delete(Collection<String> keys) throws IOException;

  /** Every object whose key starts with {@code prefix}, in key order. */
  List<ObjectEntry> list(String prefix) throws IOException;

  /**
   * The objects whose keys start with {@code prefix} and lie after {@code startAfter} (exclusive;
   * "" for the prefix's first key) and at most {@code lastKey}, in key order, listed in pages of
   * up to 1,000 keys, at most {@code maxPages} of them (ListObjectsV2 without a delimiter,
   * stopping at the first page that passes {@code lastKey}). What it covered is in the
   * answer ({@link KeyListing#coveredThrough}). This default lists the whole prefix in one
   * request ({@link #list}), for stores without paged listings (a local file system, tests).
   */
  default KeyListing listFrom(String prefix, String startAfter, String lastKey, int maxPages)
      throws IOException {
    List<ObjectEntry> out = new java.util.ArrayList<>();
    for (ObjectEntry e : list(prefix)) {
      if (KeyListing.compareKeys(e.key(), startAfter) > 0
          && KeyListing.compareKeys(e.key(), lastKey) <= 0) {
        out.add(e);
      }
    }
    out.sort((a, b) -> KeyListing.compareKeys(a.key(), b.key()));
    return new KeyListing(out, lastKey, true, 1);
  }

  /** The common prefixes ("directories", ending in "/") directly under {@code prefix}. */
  List<String> listPrefixes(String prefix) throws IOException;

  /** Every uncompleted multipart upload whose key starts with {@code prefix}. */
  List<PendingUpload> listUploads(String prefix) throws IOException;

  /**
   * Complete an upload from its part ETags (parts numbered from 1); with {@code ifNoneMatch},
   * only if the key is absent. Returns the object's ETag. {@link
   * java.io.FileNotFoundException} when the upload does not exist (any more).
   */
  String complete(String key, String uploadId, List<String> etags, boolean ifNoneMatch)
      throws IOException;

  /**
   * Does {@link #complete} with {@code ifNoneMatch} refuse an existing key (412), as S3 does?
   * Measured once per store under {@code area} (a throw-away directory the caller removes);
   * where it does not (Ceph RGW overwrites), {@link #complete} checks with a HEAD first (the
   * job commit lists its keys once instead, {@link #listFrom}); neither is atomic against a
   * concurrent writer. True for stores whose complete is exclusive by
   * construction.
   */
  default boolean conditionalComplete(String area) throws IOException {
    return true;
  }

  /**
   * Was this store measured ({@link #conditionalComplete}, in this JVM) to ignore {@code
   * If-None-Match: *} on complete (Ceph RGW)? There {@link #complete} with {@code ifNoneMatch}
   * checks with a HEAD first, and a caller that knows from a listing ({@link #listFrom}) that
   * a key is absent completes it without the condition instead. False where the store refuses
   * itself, and where nothing was measured (a HEAD checks, and the header goes too). Measures
   * nothing.
   */
  default boolean completeIgnoresCondition() {
    return false;
  }

  /**
   * Does every upload this store completes carry S3's multipart ETag ({@code
   * md5(part MD5s)-N}, N its part count) in HEAD and LIST, so that an object whose ETag has no
   * {@code -N} was not completed from an upload (another writer's single PUT)? True for S3 (AWS
   * documents it; moto and Ceph RGW are measured by the Python tests). False, the default,
   * where nothing is assumed of the ETags (a local file system: the MD5 of the bytes): the
   * committer then recognises its own object by its size ({@link
   * io.zerorename.committer.stages.CompleteUploadsStage#holds}). The Python store's
   * {@code StoreCapabilities.multipart_etags}.
   */
  default boolean multipartEtags() {
    return false;
  }

  /** Abort an upload; false when it did not exist. */
  boolean abort(String key, String uploadId) throws IOException;

  /** Conditional writes atomic by construction (a local file system): nothing to measure. */
  default boolean atomicByConstruction() {
    return false;
  }

  @Override
  default void close() throws IOException {
  }
}
