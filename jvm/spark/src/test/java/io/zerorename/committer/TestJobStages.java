package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.records.RecordFormatException;
import io.zerorename.committer.records.TaskRecord;
import io.zerorename.committer.records.SuccessData;
import io.zerorename.committer.stages.AbortJobStage;
import io.zerorename.committer.stages.CommitJobStage;
import io.zerorename.committer.stages.CommitTaskStage;
import io.zerorename.committer.stages.ListTaskRecordsStage;
import io.zerorename.committer.stages.LoadTaskRecordsStage;
import io.zerorename.committer.stages.SaveCommitRecordStage;
import io.zerorename.committer.stages.SetupJobStage;
import io.zerorename.committer.stages.StageConfig;
import io.zerorename.committer.stages.TaskOutput;

/** The job stages alone and chained: setup's checks, commit, roll forward, abort. */
class TestJobStages {

  private static void commitTask(Fixture f, int task, int attempt) throws Exception {
    StageConfig c = f.task(task, attempt);
    new CommitTaskStage(c).apply(TaskOutput.scan(c, c.attemptId()));
  }

  private static String text(Fixture f, String key) throws Exception {
    return new String(f.store.get(key), StandardCharsets.UTF_8);
  }

  @Test
  void setupWritesTheMarkerAndProbesIt() throws Exception {
    Fixture f = new Fixture("j1");
    StoreFencing.Decision d = new SetupJobStage(f.job()).apply(null);
    assertTrue(d.canFence(), d.describe());
    assertEquals("{\"jobId\": \"j1\", \"jobAttempt\": 0, \"committer\": \"fenced\", "
        + "\"probe\": 1}", text(f, "out/__fenced_job-j1/00/_job.json"));
    assertTrue(f.store.list("out/.zerorename-probe/").isEmpty(), "probe area left behind");
  }

  @Test
  void setupSendsNoSecondMarkerPutWhenTheStoreCheckSawOneRefused() throws Exception {
    Fixture f = new Fixture("j1a");
    assertEquals(StoreFencing.Support.FENCES, new SetupJobStage(f.job()).apply(null).support());
    // the store check (once per store and JVM) sent the second PUT and saw it refused
    assertEquals(0, f.stats.counter(FencedStatistics.COMMITTER_CONDITIONAL_PUT_PROBE_REFUSED));
    Fixture next = new Fixture("j1b", f.store);
    next.store.requests.clear();
    new SetupJobStage(next.job()).apply(null);
    assertEquals(Integer.valueOf(1), next.store.requests.get("PUT"), "the marker only: "
        + next.store.requests);
    assertNotNull(next.store.head("out/__fenced_job-j1b/00/_job.json"));
    // an earlier marker of the attempt answers 412 at once: still the proof, still counted
    Fixture again = new Fixture("j1b", f.store);
    new SetupJobStage(again.job()).apply(null);
    assertEquals(1, again.stats.counter(
        FencedStatistics.COMMITTER_CONDITIONAL_PUT_PROBE_REFUSED));
  }

  @Test
  void setupOfASparkWritesOwnJobIdReadsAndListsNothing() throws Exception {
    Fixture f = new Fixture("j-warm");
    new SetupJobStage(f.job()).apply(null);  // the store check: once per store and JVM
    Fixture spark = new Fixture("j-spark", f.store);
    spark.store.requests.clear();
    new SetupJobStage(spark.builder().jobIdSource(FencedOptions.SPARK_UUID).build())
        .apply(null);
    assertEquals(java.util.Map.of("HEAD", 1, "PUT", 1), spark.store.requests,
        "the destination check and the marker only");
    // the same job set up again (its marker is there): the full setup
    spark.store.requests.clear();
    new SetupJobStage(spark.builder().jobIdSource(FencedOptions.SPARK_UUID).build())
        .apply(null);
    assertNotNull(spark.store.requests.get("LIST"), spark.store.requests.toString());
    assertNotNull(spark.store.requests.get("GET"), spark.store.requests.toString());
  }

  @Test
  void setupOfAJobIdGivenByTheUserRollsForwardAndClears() throws Exception {
    Fixture f = new Fixture("j-warm2");
    new SetupJobStage(f.job()).apply(null);
    Fixture given = new Fixture("j-given", f.store);
    given.store.requests.clear();
    new SetupJobStage(given.builder().jobIdSource(FencedOptions.S3A_UUID).build()).apply(null);
    assertNotNull(given.store.requests.get("GET"), "the commit record was not looked for");
    assertNotNull(given.store.requests.get("LIST"), "the job's root was not listed");
    assertNotNull(given.store.requests.get("LIST_UPLOADS"), given.store.requests.toString());
  }

  @Test
  void aStoreTrustedWithoutMeasuringStillGetsTheSecondMarkerPut() throws Exception {
    Fixture f = new Fixture("j1c");
    f.store.atomic = true;
    f.store.ignoreCondition = true;  // trusted, yet it accepts a second conditional PUT
    ConditionalWriteUnsupportedException e = assertThrows(
        ConditionalWriteUnsupportedException.class, () -> new SetupJobStage(f.job()).apply(null));
    assertTrue(e.getMessage().contains("accepted a second PUT"), e.getMessage());
  }

  @Test
  void setupRefusesAStoreThatIgnoresTheCondition() throws Exception {
    Fixture f = new Fixture("j2");
    f.store.ignoreCondition = true;
    ConditionalWriteUnsupportedException e = assertThrows(
        ConditionalWriteUnsupportedException.class, () -> new SetupJobStage(f.job()).apply(null));
    assertTrue(e.getMessage().contains("accepts a second If-None-Match"), e.getMessage());
    assertTrue(f.store.list("out/").isEmpty(), "wrote before refusing: " + f.store.objects);
  }

  @Test
  void setupRefusesAStoreWhereRacersBothWin() throws Exception {
    Fixture f = new Fixture("j3");
    f.store.racy = true;
    RacyConditionalWritesException e = assertThrows(RacyConditionalWritesException.class,
        () -> new SetupJobStage(f.job()).apply(null));
    assertTrue(e.getMessage().contains("racing If-None-Match"), e.getMessage());
  }

  @Test
  void setupRunsOnARacyStoreWhenTheUserAcceptsTheRisk() throws Exception {
    Fixture f = new Fixture("j3b");
    f.store.racy = true;
    StoreFencing.Decision d = new SetupJobStage(f.builder().warnOnRacyStore(true).build())
        .apply(null);
    assertEquals(StoreFencing.Support.RACY, d.support());
  }

  @Test
  void setupHonoursConditionalWritesDisabled() throws Exception {
    Fixture f = new Fixture("j4");
    ConditionalWriteUnsupportedException e = assertThrows(
        ConditionalWriteUnsupportedException.class,
        () -> new SetupJobStage(f.builder().conditionalEnabled(false).build()).apply(null));
    assertTrue(e.getMessage().contains("fs.s3a.create.conditional.enabled=false"),
        e.getMessage());
  }

  @Test
  void commitJobCompletesWritesSuccessAndKeepsOnlyTheCommitRecord() throws Exception {
    Fixture f = new Fixture("j5");
    new SetupJobStage(f.job()).apply(null);
    f.write(0, 0, "p=1/part-0", "zero");
    f.write(1, 0, "p=2/part-1", "one");
    commitTask(f, 0, 0);
    commitTask(f, 1, 0);
    String stray = f.store.upload("out/p=1/part-9", "an attempt that died".getBytes(
        StandardCharsets.UTF_8));
    SuccessData s = new CommitJobStage(f.job()).apply(null);
    assertEquals("zero", text(f, "out/p=1/part-0"));
    assertEquals("one", text(f, "out/p=2/part-1"));
    assertEquals(2, s.files().size());
    SuccessData saved = SuccessData.fromBytes(f.store.get("out/_SUCCESS"), "_SUCCESS");
    assertEquals("fenced", saved.committer());
    assertEquals(Long.valueOf(2), saved.metrics().get("files"));
    assertArrayEquals(s.toBytes(), f.store.get("out/_SUCCESS"));
    assertFalse(f.store.uploads.containsKey(stray), "an unrecorded upload of the job stayed");
    List<String> left = new java.util.ArrayList<>();
    for (var o : f.store.list("out/__")) {
      left.add(o.key());
    }
    assertEquals(List.of("out/__fenced_job-j5/commit.json"), left);
    CommitRecord r = CommitRecord.fromBytes(f.store.get(left.get(0)), left.get(0), "j5",
        Fixture.DEST);
    assertEquals(Fixture.attemptId(0, 0), r.tasks().get(Fixture.taskName(0)));
  }

  /** Two committed tasks of a fresh job; their records as the task commits returned them. */
  private static List<TaskRecord> twoCommittedTasks(Fixture f) throws Exception {
    new SetupJobStage(f.job()).apply(null);
    f.write(0, 0, "part-0", "zero");
    f.write(1, 0, "part-1", "one");
    List<TaskRecord> records = new java.util.ArrayList<>();
    for (int t = 0; t < 2; t++) {
      StageConfig c = f.task(t, 0);
      records.add(new CommitTaskStage(c).apply(TaskOutput.scan(c, c.attemptId())));
    }
    f.store.requests.clear();
    return records;
  }

  @Test
  void commitJobFromCarriedRecordsListsAndReadsNoRecord() throws Exception {
    Fixture listed = new Fixture("j-listed");
    twoCommittedTasks(listed);
    new CommitJobStage(listed.job()).apply(null);  // Hadoop's protocol
    Fixture carried = new Fixture("j-carried");
    List<TaskRecord> records = twoCommittedTasks(carried);
    SuccessData s = new CommitJobStage(carried.job()).apply(records);  // Spark's protocol
    assertEquals(Integer.valueOf(2), listed.store.requests.get("GET"), "one GET per record");
    assertNull(carried.store.requests.get("GET"), "a carried record was read back");
    assertEquals(listed.store.requests.get("LIST") - 1,
        (int) carried.store.requests.get("LIST"), "the task records were listed");
    // the check of the job's keys before the commit point; cleanup: one LIST of every job
    // root (this job's records and the expiry's candidates), one of the work area
    assertEquals(Integer.valueOf(3), carried.store.requests.get("LIST"),
        carried.store.requests.toString());
    assertEquals(2, s.files().size());
    assertEquals("zero", text(carried, "out/part-0"));
    assertEquals("one", text(carried, "out/part-1"));
    CommitRecord a = CommitRecord.fromBytes(listed.store.get("out/__fenced_job-j-listed/"
        + "commit.json"), "a", "j-listed", Fixture.DEST);
    CommitRecord b = CommitRecord.fromBytes(carried.store.get("out/__fenced_job-j-carried/"
        + "commit.json"), "b", "j-carried", Fixture.DEST);
    assertEquals(a.tasks(), b.tasks());
    assertEquals(a.records().size(), b.records().size());
    assertEquals(a.records().get(0).replace("j-listed", "j-carried"), b.records().get(0),
        "the commit record names the task records where they were saved");
  }

  @Test
  void aCarriedRecordOfAnotherJobIsRefusedBeforeTheCommitPoint() throws Exception {
    Fixture f = new Fixture("j-mine");
    List<TaskRecord> records = twoCommittedTasks(f);
    TaskRecord other = TaskRecord.of("fenced", "j-other", Fixture.taskName(2),
        Fixture.attemptId(2, 0), 0, records.get(0).commits(), java.util.Map.of(), 1L);
    RecordFormatException e = assertThrows(RecordFormatException.class,
        () -> new CommitJobStage(f.job()).apply(List.of(records.get(1), other)));
    assertTrue(e.getMessage().contains("j-other"), e.getMessage());
    assertNull(f.store.head("out/__fenced_job-j-mine/commit.json"));
  }

  @Test
  void aCrashAfterTheCommitPointIsRolledForwardByTheNextAttempt() throws Exception {
    Fixture f = new Fixture("j6");
    new SetupJobStage(f.job()).apply(null);
    f.write(0, 0, "part-0", "zero");
    commitTask(f, 0, 0);
    StageConfig c = f.job();
    LoadTaskRecordsStage.Result loaded = new LoadTaskRecordsStage(c).apply(
        LoadTaskRecordsStage.Sources.listed(new ListTaskRecordsStage(c).apply(null)));
    new SaveCommitRecordStage(c).apply(new CommitRecord("j6", 0, Fixture.DEST, 1L,
        loaded.tasks(), loaded.uploads(), loaded.records()));
    // the driver dies here: nothing completed
    assertNull(f.store.head("out/part-0"));
    Fixture rerun = f.attempt(1);
    JobAlreadyCommittedException e = assertThrows(JobAlreadyCommittedException.class,
        () -> new SetupJobStage(rerun.job()).apply(null));
    assertTrue(e.getMessage().contains("rolled forward"), e.getMessage());
    assertEquals("zero", text(f, "out/part-0"));
    assertNotNull(f.store.head("out/_SUCCESS"));
    assertEquals(1, rerun.stats.counter(FencedStatistics.COMMITTER_JOBS_ROLLED_FORWARD));
  }

  @Test
  void aCompleteThatFailsLeavesTheJobCommittedForARerun() throws Exception {
    Fixture f = new Fixture("j7");
    new SetupJobStage(f.job()).apply(null);
    f.write(0, 0, "part-0", "zero");
    f.write(1, 0, "part-1", "one");
    commitTask(f, 0, 0);
    commitTask(f, 1, 0);
    f.store.failComplete = "part-1";
    assertThrows(JobCommitIncompleteException.class,
        () -> new CommitJobStage(f.job()).apply(null));
    assertNull(f.store.head("out/_SUCCESS"));
    f.store.failComplete = null;
    assertThrows(JobAlreadyCommittedException.class,
        () -> new SetupJobStage(f.attempt(1).job()).apply(null));
    assertEquals("one", text(f, "out/part-1"));
    assertEquals("zero", text(f, "out/part-0"));
  }

  @Test
  void aCrashBeforeTheCommitPointIsRolledBack() throws Exception {
    Fixture f = new Fixture("j8");
    new SetupJobStage(f.job()).apply(null);
    String up = f.write(0, 0, "part-0", "zero");
    commitTask(f, 0, 0);
    // the driver dies before saving the commit record; a rerun sets the job up again
    new SetupJobStage(f.attempt(1).job()).apply(null);
    assertFalse(f.store.uploads.containsKey(up));
    assertNull(f.store.head(f.layout.taskRecord(Fixture.taskName(0))));
    assertNull(f.store.head("out/part-0"));
  }

  @Test
  void abortJobDiscardsEverythingButPublishedOutput() throws Exception {
    Fixture f = new Fixture("j9");
    new SetupJobStage(f.job()).apply(null);
    String up = f.write(0, 0, "part-0", "zero");
    commitTask(f, 0, 0);
    new AbortJobStage(f.job()).apply(null);
    assertFalse(f.store.uploads.containsKey(up));
    assertTrue(f.store.list("out/").isEmpty(), f.store.objects.keySet().toString());
  }

  @Test
  void anotherJobsUploadsAreNotAbortedWhileThatJobIsActive() throws Exception {
    Fixture f = new Fixture("j10");
    new SetupJobStage(f.job()).apply(null);
    f.store.put("out/__magic_job-other/00/marker", new byte[0], false);
    String theirs = f.store.upload("out/part-other", "x".getBytes(StandardCharsets.UTF_8));
    f.write(0, 0, "part-0", "zero");
    commitTask(f, 0, 0);
    new CommitJobStage(f.job()).apply(null);
    assertTrue(f.store.uploads.containsKey(theirs), "aborted another job's upload");
  }

  @Test
  void dynamicOverwriteReplacesOnlyThePartitionsWritten() throws Exception {
    Fixture f = new Fixture("j11");
    for (String k : new String[] {"out/p=1/old.parquet", "out/p=2/old.parquet",
        "out/p=1/__magic_job-x/keep", "out/top.parquet"}) {
      f.store.put(k, "old".getBytes(StandardCharsets.UTF_8), false);
    }
    new SetupJobStage(f.job()).apply(null);
    f.write(0, 0, "p=1/new.parquet", "new");
    commitTask(f, 0, 0);
    new CommitJobStage(f.builder().dynamicPartitionOverwrite(true).build()).apply(null);
    assertNull(f.store.head("out/p=1/old.parquet"));
    assertNotNull(f.store.head("out/p=1/new.parquet"));
    assertNotNull(f.store.head("out/p=2/old.parquet"));
    assertNotNull(f.store.head("out/p=1/__magic_job-x/keep"));
    assertNotNull(f.store.head("out/top.parquet"));
  }

  @Test
  void finishedJobsRecordsExpireAfterTheRetention() throws Exception {
    Fixture f = new Fixture("old");
    new SetupJobStage(f.job()).apply(null);
    f.write(0, 0, "a", "a");
    commitTask(f, 0, 0);
    new CommitJobStage(f.job()).apply(null);
    f.store.now += 25L * 3600 * 1000;
    Fixture g = new Fixture("new");
    StageConfig c = new StageConfig.Builder().store(f.store)
        .layout(new FencedLayout(f.layout.dest(), "new", 0)).clock(() -> f.store.now)
        .stats(g.stats).build();
    new SetupJobStage(c).apply(null);
    StageConfig t = new StageConfig.Builder().store(f.store)
        .layout(new FencedLayout(f.layout.dest(), "new", 0)).clock(() -> f.store.now)
        .stats(g.stats).task(Fixture.taskName(0), Fixture.attemptId(0, 0), 0).build();
    new CommitTaskStage(t).apply(List.of());
    new CommitJobStage(c).apply(null);
    assertNull(f.store.head("out/__fenced_job-old/commit.json"));
    assertNotNull(f.store.head("out/__fenced_job-new/commit.json"));
    assertEquals(1, g.stats.counter(FencedStatistics.COMMITTER_RECORDS_EXPIRED));
  }
}
