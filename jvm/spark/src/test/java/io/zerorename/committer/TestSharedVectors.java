package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.records.CommittedFile;
import io.zerorename.committer.records.Json;
import io.zerorename.committer.records.PendingCommit;
import io.zerorename.committer.records.RecordedUpload;
import io.zerorename.committer.records.SuccessData;
import io.zerorename.committer.records.TaskRecord;

/**
 * The shared vectors of {@code tests/vectors/fenced/}: the Java records, given the inputs of
 * {@code tests/vectors/test_fenced_vectors.py}, write the same bytes as the Python reference,
 * and read every file back.
 */
class TestSharedVectors {
  static final String JOB = "vec-job-1";
  static final String DEST = "s3a://bucket/out";
  static final String ODD = DEST + "/year=2026/part-00007 a+b=\u00fc\"q\t.parquet";
  static final String PLAIN = DEST + "/part-00002.csv";
  static final List<String> ETAGS = List.of("0123456789abcdef0123456789abcdef",
      "fedcba9876543210fedcba9876543210");
  static final List<String> ETAG2 = List.of("00112233445566778899aabbccddeeff");
  static final String A7 = "attempt_jt_0001_m_000007_1";
  static final String A2 = "attempt_jt_0001_m_000002_0";

  static Path vectors() {
    return Paths.get(System.getProperty("basedir", "."), "..", "..", "tests", "vectors",
        "fenced");
  }

  static byte[] file(String name) throws Exception {
    return Files.readAllBytes(vectors().resolve(name));
  }

  static Map<String, Object> stats() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("counters", new TreeMap<>(Map.of("committer_tasks_succeeded", 1L)));
    m.put("gauges", new TreeMap<>());
    m.put("minimums", new TreeMap<>());
    m.put("maximums", new TreeMap<>());
    m.put("meanstatistics", new TreeMap<>());
    return m;
  }

  static void same(byte[] expected, byte[] actual) {
    assertEquals(new String(expected, StandardCharsets.UTF_8),
        new String(actual, StandardCharsets.UTF_8));
  }

  @Test
  void taskRecord() throws Exception {
    List<PendingCommit> commits = List.of(
        PendingCommit.create(ODD, "upload-1", ETAGS, 12345, JOB, A7, 1767225600000L,
            1767225600123L),
        PendingCommit.create(PLAIN, "upload-2", ETAG2, 0, JOB, A7, 1767225600000L,
            1767225600123L));
    TaskRecord r = TaskRecord.of("fenced", JOB, "task_jt_0001_m_000007", A7, 1, commits,
        stats(), 1767225600123L);
    same(file("task_record.pendingset"), r.toBytes());
    TaskRecord back = TaskRecord.fromBytes(file("task_record.pendingset"), "t");
    assertEquals(A7, back.taskAttemptId());
    assertEquals(List.of(ODD, PLAIN), List.of(back.commits().get(0).url(),
        back.commits().get(1).url()));
    same(file("task_record.pendingset"), back.toBytes());
  }

  @Test
  void commitRecord() throws Exception {
    Map<String, String> tasks = new TreeMap<>();
    tasks.put("task_jt_0001_m_000007", A7);
    tasks.put("task_jt_0001_m_000002", A2);
    String tasksDir = DEST + "/__fenced_job-" + JOB + "/00/tasks/";
    CommitRecord r = new CommitRecord(JOB, 0, DEST, 1767225600999L, tasks,
        List.of(new RecordedUpload(A7, ODD, "upload-1", ETAGS, 12345),
            new RecordedUpload(A2, PLAIN, "upload-2", ETAG2, 0)),
        List.of(tasksDir + "task_jt_0001_m_000007.pendingset",
            tasksDir + "task_jt_0001_m_000002.pendingset"));
    same(file("commit.json"), r.toBytes());
    CommitRecord back = CommitRecord.fromBytes(file("commit.json"), "c", JOB, DEST);
    assertEquals(A7, back.tasks().get("task_jt_0001_m_000007"));
    same(file("commit.json"), back.toBytes());
  }

  @Test
  void success() throws Exception {
    Map<String, Object> io = new LinkedHashMap<>();
    io.put("counters", Map.of("committer_files_committed", 2L));
    io.put("gauges", Map.of());
    io.put("minimums", Map.of("a.min", 1L));
    io.put("maximums", Map.of("a.max", 3L));
    Map<String, Object> mean = new LinkedHashMap<>();
    mean.put("samples", 2L);
    mean.put("sum", 4L);
    io.put("meanstatistics", Map.of("a.mean", mean));
    Map<String, Long> metrics = Map.of("files", 2L, "bytes", 12345L, "tasks", 2L);
    Map<String, String> diagnostics = Map.of("stage", "committer_commit_job",
        "destination", DEST, "control", "a\u0001b\nc");
    SuccessData s = new SuccessData("fenced", JOB, "spark.sql.sources.writeJobUUID",
        1767225601000L, "host-\u00fc", "zerorename fenced committer, job attempt 0", true,
        List.of(PLAIN, ODD), metrics, diagnostics, io, "committer_commit_job",
        List.of(new CommittedFile(ODD, 12345, "9f1b6a2c0d3e4f5a6b7c8d9e0f1a2b3c-2"),
            new CommittedFile(PLAIN, 0, "d41d8cd98f00b204e9800998ecf8427e")));
    same(file("_SUCCESS"), s.toBytes());
    SuccessData back = SuccessData.fromBytes(file("_SUCCESS"), "s");
    assertEquals(2, back.files().size());
    assertEquals("a\u0001b\nc", back.diagnostics().get("control"));
  }

  @Test
  void marker() throws Exception {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("jobId", JOB);
    m.put("jobAttempt", 0L);
    m.put("committer", "fenced");
    m.put("probe", 1L);
    same(file("_job.json"), Json.spaced(m));
  }

  @Test
  void aChangedFieldIsCaught() throws Exception {
    CommitRecord back = CommitRecord.fromBytes(file("commit.json"), "c", JOB, DEST);
    CommitRecord changed = new CommitRecord(JOB, 1, DEST, back.committed(), back.tasks(),
        back.uploads(), back.records());
    assertTrue(!new String(changed.toBytes(), StandardCharsets.UTF_8)
        .equals(new String(file("commit.json"), StandardCharsets.UTF_8)));
  }
}
