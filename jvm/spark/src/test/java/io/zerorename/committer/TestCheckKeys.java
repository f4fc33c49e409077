package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import io.zerorename.committer.records.RecordedUpload;
import io.zerorename.committer.records.StoreUrl;
import io.zerorename.committer.stages.AbortJobStage;
import io.zerorename.committer.stages.CheckKeysStage;
import io.zerorename.committer.stages.CommitJobStage;
import io.zerorename.committer.stages.CommitTaskStage;
import io.zerorename.committer.stages.SetupJobStage;
import io.zerorename.committer.stages.SimulatedCrashException;
import io.zerorename.committer.stages.StageConfig;
import io.zerorename.committer.stages.TaskOutput;
import io.zerorename.committer.store.S3CommitStore;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;

/**
 * The job commit's check of its keys before the commit point ({@link CheckKeysStage}): a key
 * holding another writer's object refuses the job with nothing committed, so the abort cleans
 * up and a rerun commits once the object is moved; a key holding the job's own data passes; a
 * roll-forward does not check; every key is answered (listing, then a HEAD for each key the
 * listing did not reach); on a store that ignores the condition on complete the completes reuse
 * the check's listing.
 */
class TestCheckKeys {

  private static void commitTask(Fixture f, int task) throws Exception {
    StageConfig c = f.task(task, 0);
    new CommitTaskStage(c).apply(TaskOutput.scan(c, c.attemptId()));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** A job of two tasks, one file each (part-0 "zero", part-1 "one"), set up and its tasks
   *  committed; returns their upload IDs. */
  static List<String> twoTasks(Fixture f) throws Exception {
    new SetupJobStage(f.job()).apply(null);
    List<String> ids = List.of(f.write(0, 0, "part-0", "zero"), f.write(1, 0, "part-1", "one"));
    commitTask(f, 0);
    commitTask(f, 1);
    return ids;
  }

  @Test
  void anotherWritersObjectRefusesTheJobBeforeTheCommitPoint() throws Exception {
    Fixture f = new Fixture("jc1");
    List<String> ids = twoTasks(f);
    byte[] theirs = bytes("another writer's object");
    f.store.put("out/part-1", theirs, false);
    f.store.requests.clear();
    JobCommitRefusedException e = assertThrows(JobCommitRefusedException.class,
        () -> new CommitJobStage(f.job()).apply(null));
    assertTrue(e.getMessage().contains(Fixture.DEST + "/part-1"), e.getMessage());
    assertTrue(e.getMessage().contains("1 key(s)"), e.getMessage());
    assertTrue(e.getMessage().contains("nothing is committed"), e.getMessage());
    assertTrue(e.getMessage().contains("move the object away, or write elsewhere, and rerun"),
        e.getMessage());
    assertNull(f.store.head(f.layout.commitRecord()), "no commit record");
    assertNull(f.store.head("out/part-0"), "nothing published");
    assertNull(f.store.head("out/_SUCCESS"));
    assertNull(f.store.requests.get("COMPLETE"), "nothing completed: " + f.store.requests);
    assertEquals(1, f.stats.counter(FencedStatistics.JOB_STAGE_CHECK_KEYS + ".failures"));
    // the driver aborts the job: every upload aborted, the other writer's object kept
    abortKeepsTheirsAndARerunCommits(f, ids, theirs, "jc1-rerun");
  }

  /**
   * After a job of {@link #twoTasks} was refused over another writer's object {@code theirs}
   * at part-1: the driver's abort removes every upload of the job and leaves that object alone
   * under the destination; once it is moved away, a rerun ({@code rerunJob}) commits both files.
   */
  static void abortKeepsTheirsAndARerunCommits(Fixture f, List<String> ids, byte[] theirs,
      String rerunJob) throws Exception {
    new AbortJobStage(f.job()).apply(null);
    for (String id : ids) {
      assertFalse(f.store.uploads.containsKey(id), "upload " + id + " left");
    }
    assertArrayEquals(theirs, f.store.get("out/part-1"), "the other writer's object kept");
    List<String> left = new ArrayList<>();
    f.store.list("out/").forEach(o -> left.add(o.key()));
    assertEquals(List.of("out/part-1"), left);
    // moved away, a rerun commits
    f.store.delete(List.of("out/part-1"));
    Fixture rerun = new Fixture(rerunJob, f.store);
    twoTasks(rerun);
    new CommitJobStage(rerun.job()).apply(null);
    assertEquals("zero", f.store.text("out/part-0"));
    assertEquals("one", f.store.text("out/part-1"));
    assertNotNull(f.store.head("out/_SUCCESS"));
  }

  @Test
  void aKeyHoldingTheJobsOwnDataPasses() throws Exception {
    Fixture f = new Fixture("jc2");
    List<String> ids = twoTasks(f);
    // part-0 already holds this upload's data (completed by an earlier try of this commit)
    f.store.complete("out/part-0", ids.get(0), List.of(InMemoryCommitStore.md5(bytes("zero"))),
        false);
    new CommitJobStage(f.job()).apply(null);
    assertEquals(1, f.stats.counter(FencedStatistics.JOB_STAGE_CHECK_KEYS), "the check ran");
    assertEquals(2, f.stats.counter(FencedStatistics.COMMITTER_COMPLETE_KEYS_LISTED));
    assertEquals(1, f.stats.counter(FencedStatistics.STORE_COMPLETE_RECOVERED));
    assertEquals("zero", f.store.text("out/part-0"));
    assertEquals("one", f.store.text("out/part-1"));
  }

  @Test
  void aRollForwardDoesNotCheck() throws Exception {
    Fixture f = new Fixture("jc3");
    List<String> ids = twoTasks(f);
    StageConfig dies = f.builder().stopAfter(FencedStatistics.JOB_STAGE_SAVE_COMMIT_RECORD)
        .build();
    assertThrows(SimulatedCrashException.class, () -> new CommitJobStage(dies).apply(null));
    assertEquals(1, f.stats.counter(FencedStatistics.JOB_STAGE_CHECK_KEYS));
    // the driver got as far as completing part-0 before it died
    f.store.complete("out/part-0", ids.get(0), List.of(InMemoryCommitStore.md5(bytes("zero"))),
        false);
    Fixture rerun = f.attempt(1);
    assertThrows(JobAlreadyCommittedException.class,
        () -> new SetupJobStage(rerun.job()).apply(null));
    assertEquals(0, rerun.stats.counter(FencedStatistics.JOB_STAGE_CHECK_KEYS), "checked");
    assertEquals(0, rerun.stats.counter(FencedStatistics.COMMITTER_COMPLETE_LIST_PAGES));
    assertEquals(1, rerun.stats.counter(FencedStatistics.COMMITTER_JOBS_ROLLED_FORWARD));
    assertEquals("zero", f.store.text("out/part-0"));
    assertEquals("one", f.store.text("out/part-1"));
    assertNotNull(f.store.head("out/_SUCCESS"));
  }

  @Test
  void onAStoreThatIgnoresTheConditionTheCompletesReuseTheChecksListing() throws Exception {
    Fixture f = new Fixture("jc4");
    f.store.reportIgnoresCondition = true;
    twoTasks(f);
    Fixture plain = new Fixture("jc4-plain", new InMemoryCommitStore());
    twoTasks(plain);
    f.store.requests.clear();
    plain.store.requests.clear();
    new CommitJobStage(f.job()).apply(null);
    new CommitJobStage(plain.job()).apply(null);
    // one listing of the job's keys per job commit, on either store
    assertEquals(1, f.stats.counter(FencedStatistics.COMMITTER_COMPLETE_LIST_PAGES));
    assertEquals(1, plain.stats.counter(FencedStatistics.COMMITTER_COMPLETE_LIST_PAGES));
    assertEquals(plain.store.requests, f.store.requests, "the same requests");
    assertNull(f.store.requests.get("HEAD"), "no HEAD before a complete: " + f.store.requests);
    assertEquals("zero", f.store.text("out/part-0"));
    assertEquals("one", f.store.text("out/part-1"));
  }

  @Test
  void onAStoreThatIgnoresTheConditionAnotherWritersObjectIsRefusedToo() throws Exception {
    Fixture f = new Fixture("jc5");
    f.store.reportIgnoresCondition = true;
    twoTasks(f);
    f.store.put("out/part-0", bytes("theirs"), false);
    assertThrows(JobCommitRefusedException.class,
        () -> new CommitJobStage(f.job()).apply(null));
    assertNull(f.store.head(f.layout.commitRecord()));
    assertNull(f.store.head("out/part-1"));
    assertEquals("theirs", f.store.text("out/part-0"));
  }

  // --- the listing and its HEAD fallback, counted at an S3 server (FakeS3) ---

  private static final String BUCKET = "bucket";
  private static final String DEST = "s3a://bucket/out";

  /** A task's upload of {@code out/<rel>} in {@code server}'s bucket holding {@code data},
   *  as a commit record names it (also TestCompleteListing's). */
  static RecordedUpload upload(FakeS3 server, String rel, String data) {
    S3Client s3 = server.client();
    String key = "out/" + rel;
    String id = s3.createMultipartUpload(CreateMultipartUploadRequest.builder().bucket(BUCKET)
        .key(key).build()).uploadId();
    String etag = s3.uploadPart(UploadPartRequest.builder().bucket(BUCKET).key(key)
        .uploadId(id).partNumber(1).build(), RequestBody.fromBytes(bytes(data))).eTag();
    return new RecordedUpload("attempt_jt_0001_m_000000_0", DEST + "/" + rel, id,
        List.of(etag.replace("\"", "")), data.length());
  }

  private static void other(FakeS3 server, String key, String data) {
    server.objects.put(key, bytes(data));
    server.etags.put(key, FakeS3.md5(bytes(data)));
  }

  /** Four keys with 1,200 other objects between each two: the first page reaches one key. */
  private static List<RecordedUpload> sparse(FakeS3 server) {
    List<RecordedUpload> ups = new ArrayList<>();
    for (int k = 0; k < 4; k++) {
      ups.add(upload(server, "part-" + k + "-new", "new " + k));
      for (int i = 0; i < 1200; i++) {
        other(server, String.format("out/part-%d-old-%04d", k, i), "old");
      }
    }
    return ups;
  }

  private static StageConfig config(S3CommitStore store, FencedStatistics stats) {
    return new StageConfig.Builder().store(store)
        .layout(new FencedLayout(StoreUrl.parse(DEST), "job-check", 0)).stats(stats)
        .threads(4).build();
  }

  @Test
  void theKeysTheListingDidNotReachAreHeadedOnEveryStore() throws Exception {
    StoreFencing.clearCache();
    FakeS3 server = FakeS3.aws();
    S3CommitStore store = new S3CommitStore(server.client(), "s3a", BUCKET, "fake aws "
        + UUID.randomUUID());
    assertFalse(store.completeIgnoresCondition());
    List<RecordedUpload> ups = sparse(server);
    FencedStatistics stats = new FencedStatistics();
    server.calls.clear();
    new CheckKeysStage(config(store, stats)).apply(ups);
    assertEquals(Map.of("listObjectsV2", 1, "headObject", 3), new TreeMap<>(server.calls));
    assertEquals(1, stats.counter(FencedStatistics.COMMITTER_COMPLETE_LIST_PAGES));
    assertEquals(1, stats.counter(FencedStatistics.COMMITTER_COMPLETE_KEYS_LISTED));
    assertEquals(3, stats.counter(FencedStatistics.COMMITTER_COMPLETE_KEYS_HEADED));
  }

  @Test
  void anObjectBeyondTheListingIsFoundByItsHead() throws Exception {
    StoreFencing.clearCache();
    FakeS3 server = FakeS3.aws();
    S3CommitStore store = new S3CommitStore(server.client(), "s3a", BUCKET, "fake aws "
        + UUID.randomUUID());
    List<RecordedUpload> ups = sparse(server);
    other(server, "out/part-3-new", "another writer's");
    server.calls.clear();
    JobCommitRefusedException e = assertThrows(JobCommitRefusedException.class,
        () -> new CheckKeysStage(config(store, new FencedStatistics())).apply(ups));
    assertTrue(e.getMessage().contains(DEST + "/part-3-new"), e.getMessage());
    assertEquals(Map.of("listObjectsV2", 1, "headObject", 3), new TreeMap<>(server.calls));
    assertEquals(0, server.calls("completeMultipartUpload"));
  }
}
