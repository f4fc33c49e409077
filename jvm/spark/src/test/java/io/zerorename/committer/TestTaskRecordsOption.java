package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.Test;

import io.zerorename.committer.records.TaskRecord;

/**
 * {@code fs.zerorename.fenced.task-records}: {@code messages} (no request at task commit) only
 * under Spark's protocol with its commit coordination; {@code store} otherwise; refused where
 * it cannot run. And an abort given the accepted tasks' records aborts their uploads.
 */
class TestTaskRecordsOption {

  private static TaskAttemptContext context(Fixture f, int task, int attempt, String records) {
    Configuration conf = new Configuration(false);
    conf.set(FencedOptions.SPARK_UUID, f.jobId);
    if (records != null) {
      conf.set(FencedOptions.TASK_RECORDS, records);
    }
    return new TaskAttemptContextImpl(conf,
        new TaskAttemptID("jt", 1, TaskType.MAP, task, attempt));
  }

  /** A committer as FencedCommitProtocol makes it ({@code coordination} non-null) or as
   *  Hadoop's protocol does (null). */
  private static FencedCommitter committer(Fixture f, TaskAttemptContext context,
      Boolean coordination) throws Exception {
    FencedCommitter c = new FencedCommitter(new Path(Fixture.DEST), context).withStore(f.store);
    if (coordination != null) {
      c.runUnderSparkProtocol(coordination);
    }
    return c;
  }

  @Test
  void theModeByProtocolCoordinationAndOption() throws Exception {
    Fixture f = new Fixture("job-mode");
    assertEquals("store", committer(f, context(f, 0, 0, null), null).taskRecords());
    assertEquals("store", committer(f, context(f, 0, 0, "store"), null).taskRecords());
    assertEquals("messages", committer(f, context(f, 0, 0, null), true).taskRecords());
    assertEquals("messages", committer(f, context(f, 0, 0, "Messages"), true).taskRecords());
    assertEquals("store", committer(f, context(f, 0, 0, "store"), true).taskRecords());
    assertEquals("store", committer(f, context(f, 0, 0, null), false).taskRecords());
    assertEquals("store", committer(f, context(f, 0, 0, "messages"), false).taskRecords());
    TaskRecordsOptionException bad = assertThrows(TaskRecordsOptionException.class,
        () -> committer(f, context(f, 0, 0, "memory"), true).taskRecords());
    assertTrue(bad.getMessage().contains(FencedOptions.TASK_RECORDS + "=memory"),
        bad.getMessage());
  }

  @Test
  void hadoopsProtocolRefusesMessagesAtJobSetupBeforeWritingAnything() throws Exception {
    Fixture f = new Fixture("job-hadoop");
    TaskAttemptContext ctx = context(f, 0, 0, "messages");
    TaskRecordsOptionException e = assertThrows(TaskRecordsOptionException.class,
        () -> committer(f, ctx, null).setupJob(ctx));
    assertTrue(e.getMessage().contains(FencedOptions.TASK_RECORDS + "=store"), e.getMessage());
    assertTrue(e.getMessage().contains("io.zerorename.spark.FencedCommitProtocol"),
        e.getMessage());
    assertTrue(f.store.objects.isEmpty(), "job setup wrote before refusing");
    committer(f, ctx, true).setupJob(ctx); // Spark's protocol: the same option runs
    assertNotNull(f.store.head(f.layout.marker()));
  }

  private static Map<String, Integer> since(Map<String, Integer> before,
      Map<String, Integer> after) {
    Map<String, Integer> d = new TreeMap<>();
    for (Map.Entry<String, Integer> e : after.entrySet()) {
      int n = e.getValue() - before.getOrDefault(e.getKey(), 0);
      if (n != 0) {
        d.put(e.getKey(), n);
      }
    }
    return d;
  }

  private static TaskRecord commitTask(Fixture f, Boolean coordination, String records,
      Map<String, Integer> requests) throws Exception {
    TaskAttemptContext ctx = context(f, 2, 0, records);
    FencedCommitter c = committer(f, ctx, coordination);
    assertTrue(c.needsTaskCommit(ctx)); // reads the .pending objects (S3A's work area)
    Map<String, Integer> before = new TreeMap<>(f.store.requests);
    c.commitTask(ctx);
    requests.putAll(since(before, f.store.requests));
    return c.taskRecord();
  }

  @Test
  void underSparksProtocolATaskCommitStoresNothingAndReadsNothing() throws Exception {
    Fixture f = new Fixture("job-messages");
    new io.zerorename.committer.stages.SetupJobStage(f.job()).apply(null);
    String upload = f.write(2, 0, "part-2", "two");
    Map<String, Integer> requests = new TreeMap<>();
    TaskRecord record = commitTask(f, true, null, requests);
    assertEquals(Map.of("DELETE", 1), requests); // the .pending and marker S3A left
    assertNull(f.store.head(f.layout.taskRecord(Fixture.taskName(2))));
    assertEquals(Fixture.attemptId(2, 0), record.taskAttemptId());
    assertEquals(upload, record.commits().get(0).uploadId());
    assertTrue(f.store.uploads.containsKey(upload));
  }

  @Test
  void withStoreATaskCommitPutsItsRecordAndChecksTheFence() throws Exception {
    Fixture f = new Fixture("job-store");
    new io.zerorename.committer.stages.SetupJobStage(f.job()).apply(null);
    f.write(2, 0, "part-2", "two");
    Map<String, Integer> requests = new TreeMap<>();
    TaskRecord record = commitTask(f, true, "store", requests);
    assertEquals(Map.of("DELETE", 1, "GET", 1, "PUT", 1), requests);
    byte[] saved = f.store.get(f.layout.taskRecord(Fixture.taskName(2)));
    assertTrue(java.util.Arrays.equals(record.toBytes(), saved),
        "the message's record is not the stored record's bytes");
  }

  @Test
  void anAbortGivenTheAcceptedRecordsAbortsTheirUploadsBesideAnotherJob() throws Exception {
    Fixture f = new Fixture("job-aborted");
    Fixture other = new Fixture("job-other", f.store);
    new io.zerorename.committer.stages.SetupJobStage(other.job()).apply(null);
    new io.zerorename.committer.stages.SetupJobStage(f.job()).apply(null);
    String mine = f.write(0, 0, "part-0", "committed, not stored");
    TaskAttemptContext ctx = context(f, 0, 0, null);
    FencedCommitter task = committer(f, ctx, true);
    assertTrue(task.needsTaskCommit(ctx));
    task.commitTask(ctx);
    TaskRecord record = task.taskRecord();

    FencedCommitter driver = committer(f, context(f, 0, 0, null), true);
    driver.abortJob(ctx, JobStatus.State.FAILED);
    assertTrue(f.store.uploads.containsKey(mine),
        "without the accepted records another job's marker must keep the abort off it");
    driver.abortWithTaskRecords(List.of(record));
    driver.abortJob(ctx, JobStatus.State.FAILED);
    assertFalse(f.store.uploads.containsKey(mine), "the accepted task's upload is left");
    assertNotNull(f.store.head(other.layout.marker()), "the other job's marker is touched");
  }
}
