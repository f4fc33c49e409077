package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.zerorename.committer.records.TaskRecord;
import io.zerorename.committer.stages.AbortTaskStage;
import io.zerorename.committer.stages.CommitJobStage;
import io.zerorename.committer.stages.CommitTaskStage;
import io.zerorename.committer.stages.SaveTaskRecordStage;
import io.zerorename.committer.stages.SetupJobStage;
import io.zerorename.committer.stages.StageConfig;
import io.zerorename.committer.stages.TaskOutput;

/** The task stages alone: scan, the record's conditional PUT, fencing, abort. */
class TestTaskStages {

  private static TaskRecord commit(Fixture f, int task, int attempt) throws Exception {
    StageConfig c = f.task(task, attempt);
    return new CommitTaskStage(c).apply(TaskOutput.scan(c, c.attemptId()));
  }

  @Test
  void taskCommitSavesOneRecordNamedByTheTaskAndDeletesTheWorkObjects() throws Exception {
    Fixture f = new Fixture("job1");
    new SetupJobStage(f.job()).apply(null);
    String upload = f.write(3, 0, "a/part-3.parquet", "three");
    TaskRecord record = commit(f, 3, 0);
    String key = f.layout.taskRecord(Fixture.taskName(3));
    assertEquals("out/__fenced_job-job1/00/tasks/task_jt_0001_m_000003.pendingset", key);
    TaskRecord saved = TaskRecord.fromBytes(f.store.get(key), key);
    assertEquals(Fixture.attemptId(3, 0), saved.taskAttemptId());
    assertEquals(upload, saved.commits().get(0).uploadId());
    assertEquals("s3a://bucket/out/a/part-3.parquet", saved.commits().get(0).url());
    assertEquals(List.of(InMemoryCommitStore.md5("three".getBytes(StandardCharsets.UTF_8))),
        saved.commits().get(0).etags());
    assertTrue(java.util.Arrays.equals(record.toBytes(), f.store.get(key)));
    assertTrue(f.store.list(f.layout.magicRoot() + "/").isEmpty(), "work objects left");
    assertTrue(f.store.uploads.containsKey(upload), "task commit must not complete or abort");
  }

  @Test
  void theSecondAttemptOfATaskLosesAndAbortsItsUploads() throws Exception {
    Fixture f = new Fixture("job2");
    new SetupJobStage(f.job()).apply(null);
    String first = f.write(1, 0, "part-1", "first");
    String second = f.write(1, 1, "part-1", "second");
    commit(f, 1, 0);
    TaskCommittedByOtherAttemptException e = assertThrows(
        TaskCommittedByOtherAttemptException.class, () -> commit(f, 1, 1));
    assertTrue(e.getMessage().contains(Fixture.attemptId(1, 0)), e.getMessage());
    assertTrue(f.store.uploads.containsKey(first));
    assertFalse(f.store.uploads.containsKey(second));
  }

  @Test
  void aRetriedPutWhoseAnswerWasLostIsOurs() throws Exception {
    Fixture f = new Fixture("job3");
    StageConfig c = f.task(0, 0);
    byte[] data = "{}".getBytes(StandardCharsets.UTF_8);
    f.store.put("k", data, true);
    assertNull(new SaveTaskRecordStage(c).apply(new SaveTaskRecordStage.Arguments("k", data)));
  }

  @Test
  void aTaskCommitAfterTheJobCommittedIsFencedOut() throws Exception {
    Fixture f = new Fixture("job4");
    new SetupJobStage(f.job()).apply(null);
    f.write(0, 0, "part-0", "zero");
    commit(f, 0, 0);
    new CommitJobStage(f.job()).apply(null);
    String zombie = f.write(1, 0, "part-1", "late");
    TaskFencedException e = assertThrows(TaskFencedException.class, () -> commit(f, 1, 0));
    assertTrue(e.getMessage().contains("without attempt"), e.getMessage());
    assertFalse(f.store.uploads.containsKey(zombie));
    assertNull(f.store.head(f.layout.taskRecord(Fixture.taskName(1))));
    assertNull(f.store.head("out/part-1"));
  }

  @Test
  void abortTaskAbortsWhatItWroteAndWhatItsRecordNames() throws Exception {
    Fixture f = new Fixture("job5");
    new SetupJobStage(f.job()).apply(null);
    String a = f.write(2, 0, "x/part-2", "two");
    commit(f, 2, 0);
    String b = f.write(2, 0, "x/part-2b", "more");
    assertEquals(2, new AbortTaskStage(f.task(2, 0)).apply(null));
    assertFalse(f.store.uploads.containsKey(a));
    assertFalse(f.store.uploads.containsKey(b));
    assertNull(f.store.head(f.layout.taskRecord(Fixture.taskName(2))));
    assertTrue(f.store.list(f.layout.magicRoot() + "/").isEmpty());
  }

  @Test
  void abortTaskWithTheRecordsInMessagesReadsNoTaskRecord() throws Exception {
    Fixture f = new Fixture("job5m");
    new SetupJobStage(f.job()).apply(null);
    String a = f.write(2, 0, "x/part-2", "two");
    StageConfig c = f.builder().task(Fixture.taskName(2), Fixture.attemptId(2, 0), 0)
        .taskRecordsInMessages(true).build();
    f.store.requests.clear();
    assertEquals(1, new AbortTaskStage(c).apply(null));
    assertFalse(f.store.uploads.containsKey(a));
    // the work area (S3A's .pending objects, not kept in memory here): listed and read for
    // the uploads, listed again for its delete; the abort: no GET of a task record, which no
    // task commit saved in this mode
    assertEquals(java.util.Map.of("LIST", 2, "GET", 1, "ABORT", 1, "DELETE", 1),
        f.store.requests);
  }

  @Test
  void abortTaskLeavesAnAttemptTheJobCommitted() throws Exception {
    Fixture f = new Fixture("job6");
    new SetupJobStage(f.job()).apply(null);
    f.write(0, 0, "part-0", "zero");
    commit(f, 0, 0);
    new CommitJobStage(f.job()).apply(null);
    assertEquals(0, new AbortTaskStage(f.task(0, 0)).apply(null));
    assertNotNull(f.store.head("out/part-0"));
  }

  @Test
  void aStageRunsOnce() throws Exception {
    Fixture f = new Fixture("job7");
    AbortTaskStage stage = new AbortTaskStage(f.task(0, 0));
    stage.apply(null);
    assertThrows(IllegalStateException.class, () -> stage.apply(null));
    assertEquals(1, f.stats.counter(FencedStatistics.TASK_STAGE_ABORT_TASK));
  }
}
