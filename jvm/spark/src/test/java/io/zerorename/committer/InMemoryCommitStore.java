package io.zerorename.committer;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

import io.zerorename.committer.store.CommitStore;
import io.zerorename.committer.store.ObjectEntry;
import io.zerorename.committer.store.PendingUpload;
import io.zerorename.committer.store.PreconditionFailedException;

/**
 * A store in memory with S3's semantics for what the committer uses (conditional PUT and
 * complete, multipart uploads, listings), for the stage tests. {@link #ignoreCondition}
 * makes it accept If-None-Match and ignore it; {@link #racy} makes it check, pause, then
 * write (two racers can both win); {@link #failComplete} fails completes of keys containing it;
 * {@link #reportIgnoresCondition} says the complete ignores its condition, as RGW's does;
 * {@link #multipartEtags} (on by default: its completes give S3's multipart ETag, a PUT the
 * MD5) is what it reports; {@link #afterPut} runs after each PUT (another writer's, injected).
 */
final class InMemoryCommitStore implements CommitStore {
  static final class Obj {
    final byte[] data;
    final String etag;
    long modified;

    Obj(byte[] data, String etag, long modified) {
      this.data = data;
      this.etag = etag;
      this.modified = modified;
    }
  }

  static final class Upload {
    final String key;
    final Map<Integer, byte[]> parts = new TreeMap<>();

    Upload(String key) {
      this.key = key;
    }
  }

  final Map<String, Obj> objects = new TreeMap<>();
  final Map<String, Upload> uploads = new TreeMap<>();
  final Map<String, Integer> requests = new TreeMap<>();
  private final AtomicInteger ids = new AtomicInteger();
  volatile boolean ignoreCondition;
  volatile boolean racy;
  /** Declare conditional writes atomic (the store check then measures nothing). */
  volatile boolean atomic;
  volatile String failComplete;
  /** Report the condition on complete as ignored (Ceph RGW, with {@link #ignoreCondition}). */
  volatile boolean reportIgnoresCondition;
  volatile long now = 1_700_000_000_000L;
  /** What {@link #multipartEtags()} reports. */
  volatile boolean multipartEtags = true;
  /** Called with each key after its PUT is stored (outside the store's lock), or null. */
  volatile java.util.function.Consumer<String> afterPut;

  private synchronized void count(String op) {
    requests.merge(op, 1, Integer::sum);
  }

  @Override
  public String name() {
    return "memory@" + Integer.toHexString(System.identityHashCode(this));
  }

  @Override
  public boolean completeIgnoresCondition() {
    return reportIgnoresCondition;
  }

  @Override
  public boolean atomicByConstruction() {
    return atomic;
  }

  @Override
  public boolean multipartEtags() {
    return multipartEtags;
  }

  static String md5(byte[] data) {
    try {
      StringBuilder out = new StringBuilder();
      for (byte b : MessageDigest.getInstance("MD5").digest(data)) {
        out.append(String.format("%02x", b));
      }
      return out.toString();
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void put(String key, byte[] data, boolean ifNoneMatch) throws IOException {
    count("PUT");
    if (racy && ifNoneMatch) {
      boolean exists;
      synchronized (this) {
        exists = objects.containsKey(key);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (exists) {
        throw new PreconditionFailedException(key, "exists");
      }
      synchronized (this) {
        objects.put(key, new Obj(data.clone(), md5(data), now));
      }
      return;
    }
    synchronized (this) {
      if (ifNoneMatch && !ignoreCondition && objects.containsKey(key)) {
        throw new PreconditionFailedException(key, "exists");
      }
      objects.put(key, new Obj(data.clone(), md5(data), now));
    }
    java.util.function.Consumer<String> after = afterPut;
    if (after != null) {
      after.accept(key);
    }
  }

  @Override
  public synchronized byte[] get(String key) throws IOException {
    count("GET");
    Obj o = objects.get(key);
    if (o == null) {
      throw new FileNotFoundException(key);
    }
    return o.data.clone();
  }

  @Override
  public synchronized ObjectEntry head(String key) {
    count("HEAD");
    Obj o = objects.get(key);
    return o == null ? null : new ObjectEntry(key, o.data.length, o.etag, o.modified);
  }

  @Override
  public synchronized void delete(Collection<String> keys) {
    count("DELETE");
    for (String k : keys) {
      objects.remove(k);
    }
  }

  @Override
  public synchronized List<ObjectEntry> list(String prefix) {
    count("LIST");
    List<ObjectEntry> out = new ArrayList<>();
    for (Map.Entry<String, Obj> e : objects.entrySet()) {
      if (e.getKey().startsWith(prefix)) {
        out.add(new ObjectEntry(e.getKey(), e.getValue().data.length, e.getValue().etag,
            e.getValue().modified));
      }
    }
    return out;
  }

  @Override
  public synchronized List<String> listPrefixes(String prefix) {
    count("LIST");
    TreeSet<String> out = new TreeSet<>();
    for (String k : objects.keySet()) {
      if (k.startsWith(prefix)) {
        int slash = k.indexOf('/', prefix.length());
        if (slash >= 0) {
          out.add(k.substring(0, slash + 1));
        }
      }
    }
    return new ArrayList<>(out);
  }

  @Override
  public synchronized List<PendingUpload> listUploads(String prefix) {
    count("LIST_UPLOADS");
    List<PendingUpload> out = new ArrayList<>();
    for (Map.Entry<String, Upload> e : uploads.entrySet()) {
      if (e.getValue().key.startsWith(prefix)) {
        out.add(new PendingUpload(e.getValue().key, e.getKey()));
      }
    }
    return out;
  }

  /** Create an upload of {@code key} holding {@code data} in one part; returns its ID. */
  synchronized String upload(String key, byte[] data) {
    String id = "up-" + ids.incrementAndGet();
    Upload u = new Upload(key);
    u.parts.put(1, data.clone());
    uploads.put(id, u);
    return id;
  }

  @Override
  public synchronized String complete(String key, String uploadId, List<String> etags,
      boolean ifNoneMatch) throws IOException {
    count("COMPLETE");
    if (failComplete != null && key.contains(failComplete)) {
      throw new IOException("injected failure completing " + key);
    }
    Upload u = uploads.get(uploadId);
    if (u == null || !u.key.equals(key)) {
      throw new FileNotFoundException("no upload " + uploadId + " of " + key);
    }
    if (ifNoneMatch && !ignoreCondition && objects.containsKey(key)) {
      throw new PreconditionFailedException(key, "exists");
    }
    java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
    StringBuilder md5s = new StringBuilder();
    int i = 0;
    for (byte[] part : u.parts.values()) {
      String tag = md5(part);
      if (!tag.equals(etags.get(i++))) {
        throw new IOException("part etag mismatch");
      }
      all.writeBytes(part);
      md5s.append(tag);
    }
    byte[] digests = new byte[md5s.length() / 2];
    for (int j = 0; j < digests.length; j++) {
      digests[j] = (byte) Integer.parseInt(md5s.substring(2 * j, 2 * j + 2), 16);
    }
    String etag = md5(digests) + "-" + u.parts.size();
    objects.put(key, new Obj(all.toByteArray(), etag, now));
    uploads.remove(uploadId);
    return etag;
  }

  @Override
  public synchronized boolean abort(String key, String uploadId) {
    count("ABORT");
    return uploads.remove(uploadId) != null;
  }

  synchronized String text(String key) throws IOException {
    return new String(get(key), StandardCharsets.UTF_8);
  }
}
