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
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.stages.CleanupJobStage;
import io.zerorename.committer.stages.CommitJobStage;
import io.zerorename.committer.stages.CommitTaskStage;
import io.zerorename.committer.stages.Publisher;
import io.zerorename.committer.stages.SetupJobStage;
import io.zerorename.committer.stages.SimulatedCrashException;
import io.zerorename.committer.stages.StageConfig;
import io.zerorename.committer.stages.TaskOutput;
import io.zerorename.committer.store.ObjectEntry;

/**
 * The job commit's cleanup sends its reads together, beside the {@code _SUCCESS} PUT, leaves
 * out the work area where tasks write nothing there, and decides as before.
 */
class TestCleanupReads {

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
    assertEquals(0, gated.gate.getCount(), "not every read was gated");
    assertEquals(1, expired, "the earlier job's commit record");
    assertEquals(1, f.stats.counter(FencedStatistics.COMMITTER_RECORDS_EXPIRED));
    assertEquals(2, f.stats.counter(FencedStatistics.COMMITTER_COMMITS_ABORTED));
    assertCleaned(f, strays);
    assertTrue(f.store.list(f.layout.magicRoot() + "/").isEmpty(), "the work area stayed");
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

  /** Every upload and object the cleanup should leave: the stray uploads aborted, the job's
   *  commit record alone under the job roots, both committed files readable. */
  private static void assertCleaned(Fixture f, List<String> strays) throws Exception {
    for (String id : strays) {
      assertFalse(f.store.uploads.containsKey(id), "upload " + id + " of the job stayed");
    }
    List<String> left = new ArrayList<>();
    for (ObjectEntry o : f.store.list("out/__fenced_job-")) {
      left.add(o.key());
    }
    assertEquals(List.of("out/__fenced_job-" + f.jobId + "/commit.json"), left);
    assertEquals("zero", f.store.text("out/p=1/part-0"));
    assertEquals("one", f.store.text("out/p=2/part-1"));
  }

  /** The requests of a publication the two tests below watch, in the order they went when
   *  sent one by one: the _SUCCESS PUT, then the clean-up's three reads. */
  private static List<String> successAndReads(Fixture f) {
    return List.of("PUT out/_SUCCESS", "LIST out/__fenced_job-",
        "LIST " + f.layout.magicRoot() + "/", "LIST_UPLOADS out/");
  }

  /** The job's publication again after {@link #afterSuccess} (a roll-forward publishes the
   *  same way) on {@code threads}, over a store gating {@link #successAndReads} until {@code n}
   *  of them have arrived (1: it only records them); checked cleaned. Returns that store. */
  private static GatedStore publishWatched(Fixture f, int n, int threads) throws Exception {
    List<String> strays = new ArrayList<>();
    CommitRecord record = afterSuccess(f, strays);
    List<String> watched = successAndReads(f);
    GatedStore store = new GatedStore(f.store, n, watched::contains);
    new Publisher(f.builder().store(store).threads(threads).build()).publish(record, null);
    assertNotNull(f.store.head("out/_SUCCESS"));
    assertCleaned(f, strays);
    return store;
  }

  @Test
  void theReadsGoOutBesideTheSuccessPut() throws Exception {
    GatedStore gated = publishWatched(new Fixture("j-beside"), 4, 4);
    assertEquals(0, gated.gate.getCount(), "not sent together: " + gated.arrived);
  }

  @Test
  void withOneThreadTheReadsFollowTheSuccessPutOneByOne() throws Exception {
    Fixture f = new Fixture("j-one");
    assertEquals(successAndReads(f), publishWatched(f, 1, 1).arrived);
  }

  @Test
  void theWorkAreaIsNotListedWhereTasksKeepTheirCommitsInMemory() throws Exception {
    Fixture f = new Fixture("j-memory");
    List<String> strays = new ArrayList<>();
    CommitRecord record = afterSuccess(f, strays);
    // S3A's in-memory tracker writes nothing in the work area: take out what the fixture put
    f.store.delete(f.store.list(f.layout.magicRoot() + "/").stream().map(ObjectEntry::key)
        .toList());
    GatedStore gated = new GatedStore(f.store, 2);
    int expired = new CleanupJobStage(f.builder().store(gated).workAreaWritten(false).build())
        .apply(record);
    assertEquals(0, gated.gate.getCount(), "not sent together: " + gated.arrived);
    assertTrue(gated.arrived.stream().noneMatch(r -> r.contains(FencedLayout.MAGIC_PREFIX)),
        "the work area was listed: " + gated.arrived);
    assertEquals(1, expired, "the earlier job's commit record");
    // the uncommitted task's upload and the unrecorded one: found in the uploads' listing
    assertCleaned(f, strays);
  }
}
