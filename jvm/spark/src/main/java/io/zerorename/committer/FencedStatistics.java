package io.zerorename.committer;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The fenced committer's statistics: counters, and min/max/mean samples (durations in
 * milliseconds), snapshot in Hadoop's {@code IOStatisticsSnapshot} layout as the Python
 * reference writes them into {@code _SUCCESS} and task records. Names are the Python
 * reference's ({@code zerorename.statistics}), so a job's statistics read the same whichever
 * implementation ran it.
 */
public final class FencedStatistics {

  // stages (their durations), as in zerorename.statistics
  public static final String JOB_STAGE_SETUP = "job_stage_setup";
  public static final String JOB_STAGE_LIST_TASK_RECORDS = "job_stage_list_task_records";
  public static final String JOB_STAGE_LOAD_PENDINGSETS = "job_stage_load_pendingsets";
  public static final String JOB_STAGE_SAVE_COMMIT_RECORD = "job_stage_save_commit_record";
  /** Before the commit point: the keys the job completes hold no other writer's object. */
  public static final String JOB_STAGE_CHECK_KEYS = "job_stage_check_keys";
  public static final String JOB_STAGE_COMPLETE_UPLOADS = "job_stage_complete_uploads";
  public static final String JOB_STAGE_SAVE_SUCCESS_MARKER = "job_stage_save_success_marker";
  public static final String JOB_STAGE_CLEANUP = "job_stage_cleanup";
  public static final String JOB_STAGE_ABORT = "job_stage_abort";
  public static final String JOB_STAGE_PREPARE_DESTINATION = "job_stage_prepare_destination";
  public static final String COMMITTER_COMMIT_JOB = "committer_commit_job";
  public static final String TASK_STAGE_SETUP = "task_stage_setup";
  public static final String TASK_STAGE_COMMIT = "task_stage_commit";
  public static final String TASK_STAGE_SAVE_TASK_RECORD = "task_stage_save_task_record";
  public static final String TASK_STAGE_ABORT_TASK = "task_stage_abort_task";
  public static final String FAILURES_SUFFIX = ".failures";

  // counters
  public static final String COMMITTER_FILES_COMMITTED = "committer_files_committed";
  public static final String COMMITTER_BYTES_COMMITTED = "committer_bytes_committed";
  public static final String COMMITTER_COMMITS_COMPLETED = "committer_commits_completed";
  public static final String COMMITTER_COMMITS_ABORTED = "committer_commits_aborted";
  public static final String COMMITTER_JOBS_COMPLETED = "committer_jobs_completed";
  public static final String COMMITTER_JOBS_FAILED = "committer_jobs_failed";
  public static final String COMMITTER_JOBS_ROLLED_FORWARD = "committer_jobs_rolled_forward";
  public static final String COMMITTER_TASKS_SUCCEEDED = "committer_tasks_succeeded";
  public static final String COMMITTER_TASKS_FAILED = "committer_tasks_failed";
  public static final String COMMITTER_TASK_FILE_COUNT = "committer_task_file_count";
  public static final String COMMITTER_RECORDS_EXPIRED = "committer_records_expired";
  public static final String COMMITTER_CONDITIONAL_PUT_PROBE_REFUSED =
      "committer_conditional_put_probe_refused";
  public static final String COMMITTER_FENCED_FILES_CREATED = "committer_fenced_files_created";
  public static final String COMMITTER_LOAD_PENDINGSET = "committer_load_pendingset";
  public static final String COMMITTER_UPLOADS_UNATTRIBUTED = "committer_uploads_unattributed";
  public static final String COMMITTER_CLEANUP_FAILURES = "committer_cleanup_failures";
  public static final String COMMITTER_FILES_REPLACED = "committer_files_replaced";
  public static final String STORE_COMPLETE_RECOVERED = "store_complete_recovered";
  /** LIST pages a job commit sent to find which of its keys exist: its check before the commit
   *  point ({@code job_stage_check_keys}), and on a store that ignores If-None-Match on
   *  complete a roll-forward's listing (instead of a HEAD per key). */
  public static final String COMMITTER_COMPLETE_LIST_PAGES = "committer_complete_list_pages";
  /** The job's keys whose existence those pages answered. */
  public static final String COMMITTER_COMPLETE_KEYS_LISTED = "committer_complete_keys_listed";
  /** The job's keys the listing did not reach (its page budget spent): a HEAD each. */
  public static final String COMMITTER_COMPLETE_KEYS_HEADED = "committer_complete_keys_headed";

  private final Map<String, AtomicLong> counters = new ConcurrentHashMap<>();
  private final Map<String, long[]> samples = new TreeMap<>();

  public void incr(String name) {
    incr(name, 1);
  }

  public void incr(String name, long amount) {
    counters.computeIfAbsent(name, k -> new AtomicLong()).addAndGet(amount);
  }

  public long counter(String name) {
    AtomicLong v = counters.get(name);
    return v == null ? 0 : v.get();
  }

  /** One sample of {@code name} (min, max, mean). */
  public synchronized void sample(String name, long value) {
    long[] s = samples.get(name);
    if (s == null) {
      samples.put(name, new long[] {value, value, 1, value});
    } else {
      s[0] = Math.min(s[0], value);
      s[1] = Math.max(s[1], value);
      s[2]++;
      s[3] += value;
    }
  }

  /** A duration of {@code name} (a stage), failed or not. */
  public void duration(String name, long millis, boolean failed) {
    String key = failed ? name + FAILURES_SUFFIX : name;
    incr(key);
    sample(key, millis);
  }

  /** Add another snapshot's counters and samples (a task's, read back from its record). */
  @SuppressWarnings("unchecked")
  public synchronized void aggregate(Map<String, Object> snapshot) {
    if (snapshot == null) {
      return;
    }
    Object c = snapshot.get("counters");
    if (c instanceof Map) {
      for (Map.Entry<String, Object> e : ((Map<String, Object>) c).entrySet()) {
        if (e.getValue() instanceof Long) {
          incr(e.getKey(), (Long) e.getValue());
        }
      }
    }
  }

  /** Hadoop's IOStatisticsSnapshot layout, keys sorted (the Python reference's snapshot). */
  public synchronized Map<String, Object> snapshot() {
    Map<String, Object> out = new java.util.LinkedHashMap<>();
    Map<String, Object> cs = new TreeMap<>();
    for (Map.Entry<String, AtomicLong> e : counters.entrySet()) {
      cs.put(e.getKey(), e.getValue().get());
    }
    Map<String, Object> mins = new TreeMap<>();
    Map<String, Object> maxs = new TreeMap<>();
    Map<String, Object> means = new TreeMap<>();
    for (Map.Entry<String, long[]> e : samples.entrySet()) {
      long[] s = e.getValue();
      mins.put(e.getKey() + ".min", s[0]);
      maxs.put(e.getKey() + ".max", s[1]);
      Map<String, Object> mean = new java.util.LinkedHashMap<>();
      mean.put("samples", s[2]);
      mean.put("sum", s[3]);
      means.put(e.getKey() + ".mean", mean);
    }
    out.put("counters", cs);
    out.put("gauges", new TreeMap<String, Object>());
    out.put("minimums", mins);
    out.put("maximums", maxs);
    out.put("meanstatistics", means);
    return out;
  }
}
