package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.records.Destinations;
import io.zerorename.committer.records.PendingCommit;
import io.zerorename.committer.records.RecordFormatException;
import io.zerorename.committer.records.RecordedUpload;
import io.zerorename.committer.records.TaskRecord;

/**
 * Load and validate every task record: written by this job, every upload inside the
 * destination, one attempt per task (the last saved, then the higher attempt number), each
 * destination committed by one task only. Nothing is completed here.
 */
public final class LoadTaskRecordsStage
    extends AbstractStage<LoadTaskRecordsStage.Sources, LoadTaskRecordsStage.Result> {

  /**
   * Where the task records come from: keys to read (Hadoop's protocol, after
   * {@link ListTaskRecordsStage}), or the records themselves (Spark's protocol: the accepted
   * tasks' commit messages carried them, each the record its task's attempt saved or found
   * saved by the attempt that won), validated and chosen the same way, nothing read.
   */
  public static final class Sources {
    private final List<String> keys;
    private final List<TaskRecord> records;

    private Sources(List<String> keys, List<TaskRecord> records) {
      this.keys = keys;
      this.records = records;
    }

    public static Sources listed(List<String> keys) {
      return new Sources(List.copyOf(keys), null);
    }

    public static Sources carried(List<TaskRecord> records) {
      return new Sources(null, List.copyOf(records));
    }
  }

  /** The winning attempts and their uploads. */
  public static final class Result {
    private final Map<String, String> tasks;
    private final List<RecordedUpload> uploads;
    private final List<String> records;
    private final FencedStatistics taskStats;

    Result(Map<String, String> tasks, List<RecordedUpload> uploads, List<String> records,
        FencedStatistics taskStats) {
      this.tasks = Collections.unmodifiableMap(tasks);
      this.uploads = Collections.unmodifiableList(uploads);
      this.records = Collections.unmodifiableList(records);
      this.taskStats = taskStats;
    }

    /** Task name to the attempt that committed it. */
    public Map<String, String> tasks() {
      return tasks;
    }

    public List<RecordedUpload> uploads() {
      return uploads;
    }

    /** The URLs of the task records loaded. */
    public List<String> records() {
      return records;
    }

    public FencedStatistics taskStats() {
      return taskStats;
    }
  }

  public LoadTaskRecordsStage(StageConfig config) {
    super(FencedStatistics.JOB_STAGE_LOAD_PENDINGSETS, config);
  }

  private static long number(String s) {
    try {
      return s == null ? 0 : Long.parseLong(s);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  @Override
  protected Result executeStage(Sources sources) throws IOException {
    StageConfig c = config();
    List<Loaded> loaded = new ArrayList<>();
    if (sources.records != null) {
      for (TaskRecord r : sources.records) {
        loaded.add(new Loaded(url(c.layout().taskRecord(r.taskName())), r));
      }
    } else {
      for (String key : sources.keys) {
        String path = url(key);
        loaded.add(new Loaded(path, TaskRecord.fromBytes(c.store().get(key), path)));
      }
    }
    return select(c, loaded);
  }

  /** A task record and the URL it was saved at. */
  private static final class Loaded {
    final String path;
    final TaskRecord record;

    Loaded(String path, TaskRecord record) {
      this.path = path;
      this.record = record;
    }
  }

  private static Result select(StageConfig c, List<Loaded> loaded) throws IOException {
    String dest = c.layout().destUrl();
    Map<String, List<TaskRecord>> byTask = new TreeMap<>();
    Map<TaskRecord, String> paths = new HashMap<>();
    for (Loaded l : loaded) {
      String path = l.path;
      TaskRecord r = l.record;
      if (!r.jobId().equals(c.jobId())) {
        throw new RecordFormatException(path, "written by job " + r.jobId() + ", not this job "
            + c.jobId());
      }
      for (PendingCommit p : r.commits()) {
        Destinations.relative(p.url(), dest, path);
      }
      c.stats().incr(FencedStatistics.COMMITTER_LOAD_PENDINGSET);
      c.stats().sample(FencedStatistics.COMMITTER_TASK_FILE_COUNT, r.commits().size());
      byTask.computeIfAbsent(r.taskName(), k -> new ArrayList<>()).add(r);
      paths.put(r, path);
    }
    Map<String, String> tasks = new TreeMap<>();
    List<RecordedUpload> uploads = new ArrayList<>();
    List<String> records = new ArrayList<>();
    FencedStatistics taskStats = new FencedStatistics();
    Map<String, String> seen = new HashMap<>();
    Set<String> attempts = new HashSet<>();
    for (Map.Entry<String, List<TaskRecord>> e : byTask.entrySet()) {
      List<TaskRecord> rs = e.getValue();
      rs.sort(Comparator.<TaskRecord>comparingLong(r -> number(r.extraData()
          .get(TaskRecord.SAVED)))
          .thenComparingLong(r -> number(r.extraData().get(TaskRecord.TASK_ATTEMPT_NUMBER)))
          .thenComparing(TaskRecord::taskAttemptId));
      TaskRecord winner = rs.get(rs.size() - 1);
      String attempt = winner.taskAttemptId();
      if (!attempts.add(attempt)) {
        throw new RecordFormatException(paths.get(winner), "task attempt " + attempt
            + " is loaded twice");
      }
      tasks.put(e.getKey(), attempt);
      records.add(paths.get(winner));
      taskStats.aggregate(winner.iostatistics());
      for (PendingCommit p : winner.commits()) {
        String other = seen.put(p.url(), attempt);
        if (other != null) {
          throw new RecordFormatException(paths.get(winner), "destination " + p.url()
              + " is also written by task attempt " + other + ": two tasks cannot commit "
              + "the same file");
        }
        uploads.add(new RecordedUpload(attempt, p.url(), p.uploadId(), p.etags(),
            p.length()));
      }
    }
    return new Result(tasks, uploads, records, taskStats);
  }
}
