package io.zerorename.committer.records;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A task's record: every upload of the attempt that committed the task (the Python
 * reference's {@code PendingSet}, version 2), saved with one conditional PUT at a key named
 * by the task, never the attempt. {@code extraData} names the attempt, the task, the attempt
 * number, when it was saved and the committer that wrote it.
 */
public final class TaskRecord {
  public static final int VERSION = 2;
  public static final String TASK_ATTEMPT_ID = "task.attempt.id";
  public static final String TASK_NAME = "zerorename.task.name";
  public static final String TASK_ATTEMPT_NUMBER = "zerorename.task.attempt";
  public static final String SAVED = "zerorename.saved";
  public static final String COMMITTER = "zerorename.committer";

  private final String jobId;
  private final List<PendingCommit> commits;
  private final Map<String, String> extraData;
  private final Map<String, Object> iostatistics;

  public TaskRecord(String jobId, List<PendingCommit> commits, Map<String, String> extraData,
      Map<String, Object> iostatistics) {
    this.jobId = jobId;
    this.commits = Collections.unmodifiableList(new ArrayList<>(commits));
    this.extraData = Collections.unmodifiableMap(new LinkedHashMap<>(extraData));
    this.iostatistics = iostatistics;
  }

  /** The record of {@code attemptId} (attempt number {@code attempt}) of {@code taskName}. */
  public static TaskRecord of(String committer, String jobId, String taskName, String attemptId,
      int attempt, List<PendingCommit> commits, Map<String, Object> stats, long savedMillis) {
    Map<String, String> extra = new LinkedHashMap<>();
    extra.put(TASK_ATTEMPT_ID, attemptId);
    extra.put(TASK_NAME, taskName);
    extra.put(TASK_ATTEMPT_NUMBER, Integer.toString(attempt));
    extra.put(SAVED, Long.toString(savedMillis));
    extra.put(COMMITTER, committer);
    return new TaskRecord(jobId, commits, extra, stats);
  }

  public String jobId() {
    return jobId;
  }

  public List<PendingCommit> commits() {
    return commits;
  }

  public Map<String, String> extraData() {
    return extraData;
  }

  public Map<String, Object> iostatistics() {
    return iostatistics;
  }

  public String taskAttemptId() {
    return extraData.getOrDefault(TASK_ATTEMPT_ID, "");
  }

  public String taskName() {
    return extraData.getOrDefault(TASK_NAME, taskAttemptId());
  }

  public Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("version", (long) VERSION);
    m.put("jobId", jobId);
    List<Object> list = new ArrayList<>();
    for (PendingCommit c : commits) {
      list.add(c.toJson());
    }
    m.put("commits", list);
    m.put("extraData", new LinkedHashMap<String, Object>(extraData));
    m.put("iostatistics", iostatistics);
    return m;
  }

  public byte[] toBytes() {
    return Json.compact(toJson());
  }

  public static TaskRecord fromBytes(byte[] data, String path) throws RecordFormatException {
    Map<String, Object> d = Fields.mapOf(Json.parse(data, path), path, "task record");
    long version = Fields.integer(d, "version", path, null, 0);
    if (version != VERSION) {
      throw new RecordFormatException(path, "pendingset version " + version + ", expected "
          + VERSION);
    }
    Object raw = d.get("commits");
    if (!(raw instanceof List)) {
      throw new RecordFormatException(path, "field 'commits' is not a list");
    }
    List<PendingCommit> commits = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    int i = 0;
    for (Object c : (List<?>) raw) {
      PendingCommit commit = PendingCommit.fromJson(c, path + " (commit " + i++ + ")");
      if (!seen.add(commit.url())) {
        throw new RecordFormatException(path, "destination " + commit.url()
            + " is written to by more than one pending commit");
      }
      commits.add(commit);
    }
    return new TaskRecord(Fields.str(d, "jobId", path, false), commits,
        Fields.strMap(d.get("extraData"), path, "extraData"),
        Fields.objectMap(d.get("iostatistics"), path, "iostatistics"));
  }
}
