package io.zerorename.committer.store;

import java.io.IOException;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * A store that sends every request, {@link #close} and the questions about the store (its
 * defaults too) to another store, {@link #delegate}: the base of a store that changes a few
 * requests of another and passes the rest on unchanged (the tests' gated stores, the
 * conformance driver's paused store). A subclass overrides only what it changes. A subclass
 * that changes {@link #list} alone should mind that {@link #listFrom} goes to the delegate's
 * own, not through that {@link #list}.
 */
public abstract class ForwardingCommitStore implements CommitStore {
  private final CommitStore delegate;

  protected ForwardingCommitStore(CommitStore delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /** The store every request not overridden goes to. */
  protected final CommitStore delegate() {
    return delegate;
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public void put(String key, byte[] data, boolean ifNoneMatch) throws IOException {
    delegate.put(key, data, ifNoneMatch);
  }

  @Override
  public byte[] get(String key) throws IOException {
    return delegate.get(key);
  }

  @Override
  public ObjectEntry head(String key) throws IOException {
    return delegate.head(key);
  }

  @Override
  public void delete(Collection<String> keys) throws IOException {
    delegate.delete(keys);
  }

  @Override
  public List<ObjectEntry> list(String prefix) throws IOException {
    return delegate.list(prefix);
  }

  @Override
  public KeyListing listFrom(String prefix, String startAfter, String lastKey, int maxPages)
      throws IOException {
    return delegate.listFrom(prefix, startAfter, lastKey, maxPages);
  }

  @Override
  public List<String> listPrefixes(String prefix) throws IOException {
    return delegate.listPrefixes(prefix);
  }

  @Override
  public List<PendingUpload> listUploads(String prefix) throws IOException {
    return delegate.listUploads(prefix);
  }

  @Override
  public String complete(String key, String uploadId, List<String> etags, boolean ifNoneMatch)
      throws IOException {
    return delegate.complete(key, uploadId, etags, ifNoneMatch);
  }

  @Override
  public boolean conditionalComplete(String area) throws IOException {
    return delegate.conditionalComplete(area);
  }

  @Override
  public boolean completeIgnoresCondition() {
    return delegate.completeIgnoresCondition();
  }

  @Override
  public boolean multipartEtags() {
    return delegate.multipartEtags();
  }

  @Override
  public boolean abort(String key, String uploadId) throws IOException {
    return delegate.abort(key, uploadId);
  }

  @Override
  public boolean atomicByConstruction() {
    return delegate.atomicByConstruction();
  }

  @Override
  public void close() throws IOException {
    delegate.close();
  }
}
