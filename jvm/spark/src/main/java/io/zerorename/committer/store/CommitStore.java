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
   * where it does not (Ceph RGW overwrites), {@link #complete} checks with a HEAD first, which
   * is not atomic against a concurrent writer. True for stores whose complete is exclusive by
   * construction.
   */
  default boolean conditionalComplete(String area) throws IOException {
    return true;
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
