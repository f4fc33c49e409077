package io.zerorename.committer;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import io.zerorename.committer.store.CommitStore;
import io.zerorename.committer.store.ObjectEntry;
import io.zerorename.committer.store.PendingUpload;

/**
 * Delegates to the in-memory store; each request {@link #gated} names ("LIST &lt;prefix&gt;",
 * "LIST_UPLOADS &lt;prefix&gt;", "HEAD &lt;key&gt;", "PUT &lt;key&gt;") first waits (at most
 * {@link #WAIT_SECONDS}) until {@code n} gated requests have arrived, so gated requests sent
 * one after the other fail with an IOException. {@link #arrived} lists every gated request in
 * the order they came; {@link #failList} (the roots' LIST) and {@link #failUploads} fail a
 * read.
 */
final class GatedStore implements CommitStore {
  static final long WAIT_SECONDS = 5;
  final InMemoryCommitStore inner;
  final CountDownLatch gate;
  final Predicate<String> gated;
  final List<String> arrived = Collections.synchronizedList(new ArrayList<>());
  volatile IOException failList;
  volatile IOException failUploads;

  /** Gates every LIST and LIST_UPLOADS: the cleanup's reads. */
  GatedStore(InMemoryCommitStore inner, int n) {
    this(inner, n, what -> what.startsWith("LIST"));
  }

  GatedStore(InMemoryCommitStore inner, int n, Predicate<String> gated) {
    this.inner = inner;
    this.gate = new CountDownLatch(n);
    this.gated = gated;
  }

  private void arrive(String what) throws IOException {
    if (!gated.test(what)) {
      return;
    }
    arrived.add(what);
    gate.countDown();
    try {
      if (!gate.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
        throw new IOException(what + " waited " + WAIT_SECONDS + " s for the other gated "
            + "requests (" + gate.getCount() + " missing): they were not sent together");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException(what);
    }
  }

  @Override
  public String name() {
    return inner.name();
  }

  @Override
  public void put(String key, byte[] data, boolean ifNoneMatch) throws IOException {
    arrive("PUT " + key);
    inner.put(key, data, ifNoneMatch);
  }

  @Override
  public byte[] get(String key) throws IOException {
    return inner.get(key);
  }

  @Override
  public ObjectEntry head(String key) throws IOException {
    arrive("HEAD " + key);
    return inner.head(key);
  }

  @Override
  public void delete(Collection<String> keys) {
    inner.delete(keys);
  }

  @Override
  public List<ObjectEntry> list(String prefix) throws IOException {
    arrive("LIST " + prefix);
    List<ObjectEntry> out = inner.list(prefix);
    IOException fail = failList;
    if (fail != null && prefix.endsWith(FencedLayout.FENCED_PREFIX)) {
      throw fail;
    }
    return out;
  }

  @Override
  public List<String> listPrefixes(String prefix) {
    return inner.listPrefixes(prefix);
  }

  @Override
  public List<PendingUpload> listUploads(String prefix) throws IOException {
    arrive("LIST_UPLOADS " + prefix);
    List<PendingUpload> out = inner.listUploads(prefix);
    if (failUploads != null) {
      throw failUploads;
    }
    return out;
  }

  @Override
  public String complete(String key, String uploadId, List<String> etags, boolean ifNoneMatch)
      throws IOException {
    return inner.complete(key, uploadId, etags, ifNoneMatch);
  }

  @Override
  public boolean abort(String key, String uploadId) {
    return inner.abort(key, uploadId);
  }

  @Override
  public boolean atomicByConstruction() {
    return inner.atomicByConstruction();
  }

  @Override
  public boolean completeIgnoresCondition() {
    return inner.completeIgnoresCondition();
  }

  @Override
  public boolean multipartEtags() {
    return inner.multipartEtags();
  }
}
