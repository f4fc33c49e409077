package io.zerorename.committer;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import io.zerorename.committer.store.ForwardingCommitStore;
import io.zerorename.committer.store.KeyListing;
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
final class GatedStore extends ForwardingCommitStore {
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
    super(inner);
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
  public void put(String key, byte[] data, boolean ifNoneMatch) throws IOException {
    arrive("PUT " + key);
    inner.put(key, data, ifNoneMatch);
  }

  @Override
  public ObjectEntry head(String key) throws IOException {
    arrive("HEAD " + key);
    return inner.head(key);
  }

  @Override
  public List<ObjectEntry> list(String prefix) throws IOException {
    arrive("LIST " + prefix);
    return listed(prefix, inner.list(prefix));
  }

  /** Gated as {@link #list} is: the in-memory store's listFrom is one LIST of the prefix. */
  @Override
  public KeyListing listFrom(String prefix, String startAfter, String lastKey, int maxPages)
      throws IOException {
    arrive("LIST " + prefix);
    return listed(prefix, inner.listFrom(prefix, startAfter, lastKey, maxPages));
  }

  private <T> T listed(String prefix, T out) throws IOException {
    IOException fail = failList;
    if (fail != null && prefix.endsWith(FencedLayout.FENCED_PREFIX)) {
      throw fail;
    }
    return out;
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
}
