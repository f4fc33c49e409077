package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.stages.CleanupJobStage;
import io.zerorename.committer.stages.CommitJobStage;
import io.zerorename.committer.stages.CommitTaskStage;
import io.zerorename.committer.stages.SetupJobStage;
import io.zerorename.committer.stages.SimulatedCrashException;
import io.zerorename.committer.stages.StageConfig;
import io.zerorename.committer.stages.TaskOutput;
import io.zerorename.committer.store.CommitStore;
import io.zerorename.committer.store.ObjectEntry;
import io.zerorename.committer.store.PendingUpload;

/** The job commit's cleanup sends its three reads together, and decides as before. */
class TestCleanupReads {

  /**
   * Delegates to the in-memory store; each LIST and LIST_UPLOADS first waits (at most {@link
   * #WAIT_SECONDS}) until {@link #reads} of them have arrived, so reads sent one after the
   * other fail with an IOException; {@link #failList} / {@link #failUploads} fail a read.
   */
  private static final class GatedStore implements CommitStore {
    static final long WAIT_SECONDS = 5;
    final InMemoryCommitStore inner;
    final CountDownLatch reads;
    volatile IOException failList;
    volatile IOException failUploads;

    GatedStore(InMemoryCommitStore inner, int reads) {
      this.inner = inner;
      this.reads = new CountDownLatch(reads);
    }

    private void arrive(String what) throws IOException {
      reads.countDown();
      try {
        if (!reads.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
          throw new IOException(what + " waited " + WAIT_SECONDS + " s for the other reads "
              + "of the cleanup (" + reads.getCount() + " missing): they were not sent together");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException(what);
      }
    }

    @Override
    public String name() {
      return inner.name();
    }

    @Override
    public void put(String key, byte[] data, boolean ifNoneMatch) throws IOException {
      inner.put(key, data, ifNoneMatch);
    }

    @Override
    public byte[] get(String key) throws IOException {
      return inner.get(key);
    }

    @Override
    public ObjectEntry head(String key) {
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
  }

  private static void commitTask(Fixture f, int task, int attempt) throws Exception {
    StageConfig c = f.task(task, attempt);
    new CommitTaskStage(c).apply(TaskOutput.scan(c, c.attemptId()));
  }

  /** The state a job commit leaves just after {@code _SUCCESS}: an earlier job's commit record
   *  past the retention, two committed tasks, a task that wrote and did not commit, and an
   *  upload of the job recorded nowhere. Returns the commit record. */
  private static CommitRecord afterSuccess(Fixture f, List<String> strays) throws Exception {
    Fixture old = new Fixture("j-earlier", f.store);
    new SetupJobStage(old.job()).apply(null);
    old.write(0, 0, "old/part-0", "old");
    commitTask(old, 0, 0);
    new CommitJobStage(old.job()).apply(null);
    f.store.now += 2L * 24 * 3600 * 1000;
    new SetupJobStage(f.job()).apply(null);
    f.write(0, 0, "p=1/part-0", "zero");
    f.write(1, 0, "p=2/part-1", "one");
    commitTask(f, 0, 0);
    commitTask(f, 1, 0);
    strays.add(f.write(2, 0, "p=3/part-2", "never committed"));
    strays.add(f.store.upload("out/p=9/part-9", "an attempt that died".getBytes(
        StandardCharsets.UTF_8)));
    StageConfig dies = f.builder()
        .stopAfter(FencedStatistics.JOB_STAGE_SAVE_SUCCESS_MARKER).build();
    assertThrows(SimulatedCrashException.class, () -> new CommitJobStage(dies).apply(null));
    assertNotNull(f.store.head("out/_SUCCESS"));
    String key = f.layout.commitRecord();
    return CommitRecord.fromBytes(f.store.get(key), key, f.jobId, Fixture.DEST);
  }

  @Test
  void theThreeReadsAreSentTogetherAndDecideAsBefore() throws Exception {
    Fixture f = new Fixture("j-clean");
    List<String> strays = new ArrayList<>();
    CommitRecord record = afterSuccess(f, strays);
    GatedStore gated = new GatedStore(f.store, 3);
    f.store.requests.clear();
    int expired = new CleanupJobStage(f.builder().store(gated).build()).apply(record);
    Map<String, Integer> requests = Map.copyOf(f.store.requests);
    assertEquals(0, gated.reads.getCount(), "not every read was gated");
    assertEquals(1, expired, "the earlier job's commit record");
    assertEquals(1, f.stats.counter(FencedStatistics.COMMITTER_RECORDS_EXPIRED));
    for (String id : strays) {
      assertFalse(f.store.uploads.containsKey(id), "upload " + id + " of the job stayed");
    }
    assertEquals(2, f.stats.counter(FencedStatistics.COMMITTER_COMMITS_ABORTED));
    List<String> left = new ArrayList<>();
    for (ObjectEntry o : f.store.list("out/__")) {
      left.add(o.key());
    }
    assertEquals(List.of("out/__fenced_job-j-clean/commit.json"), left);
    assertTrue(f.store.list(f.layout.magicRoot() + "/").isEmpty(), "the work area stayed");
    assertEquals("zero", f.store.text("out/p=1/part-0"));
    assertEquals("one", f.store.text("out/p=2/part-1"));
    // the same requests as when the reads went one by one (measured on the sequential code):
    // the three reads, the .pending of the uncommitted task, the walk that finds no other job
    // may own the unrecorded upload (7 listings of prefixes, counted as LIST), two aborts, one
    // DeleteObjects for the job and one for the expiry
    assertEquals(Map.of("LIST", 2 + 7, "LIST_UPLOADS", 1, "GET", 1, "ABORT", 2, "DELETE", 2),
        requests);
  }

  @Test
  void aFailedReadFailsTheCleanupWithItsOwnErrorAndChangesNothing() throws Exception {
    Fixture f = new Fixture("j-fail");
    List<String> strays = new ArrayList<>();
    CommitRecord record = afterSuccess(f, strays);
    GatedStore gated = new GatedStore(f.store, 3);
    gated.failUploads = new IOException("ListMultipartUploads: 503 Slow Down");
    IOException e = assertThrows(IOException.class,
        () -> new CleanupJobStage(f.builder().store(gated).build()).apply(record));
    assertSame(gated.failUploads, e);
    for (String id : strays) {
      assertTrue(f.store.uploads.containsKey(id), "upload " + id + " aborted after a failure");
    }
    assertNotNull(f.store.head(f.layout.marker()), "deleted after a failure");
    // the roots' LIST failing too: its error is the one reported, as when it went first
    GatedStore both = new GatedStore(f.store, 3);
    both.failUploads = gated.failUploads;
    both.failList = new IOException("ListObjectsV2: 500");
    Fixture again = new Fixture("j-fail", f.store);
    IOException first = assertThrows(IOException.class,
        () -> new CleanupJobStage(again.builder().store(both).build()).apply(record));
    assertSame(both.failList, first);
  }
}
