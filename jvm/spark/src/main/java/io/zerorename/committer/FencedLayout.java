package io.zerorename.committer;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;

import io.zerorename.committer.records.StoreUrl;

/**
 * Where a fenced job keeps its records inside the destination, as the Python reference lays
 * them out ({@code zerorename.committers.layout}), plus the JVM's work area:
 *
 * <pre>
 *   __fenced_job-&lt;job id&gt;/commit.json                  the job commit record (commit point)
 *   __fenced_job-&lt;job id&gt;/&lt;NN&gt;/_job.json                job attempt NN's marker and probe
 *   __fenced_job-&lt;job id&gt;/&lt;NN&gt;/tasks/&lt;task&gt;.pendingset   one record per task
 *   __magic_job-&lt;job id&gt;/job-&lt;job id&gt;/&lt;NN&gt;/tasks/&lt;attempt&gt;/__base/...
 *                                                    task output (S3A magic paths)
 * </pre>
 *
 * <p>The work area is an S3A magic path: Spark's writers create files there, S3A turns each
 * into an uncompleted multipart upload of its final key and a {@code .pending} record beside
 * it (or, with {@code fs.s3a.committer.magic.track.commits.in.memory.enabled}, keeps that
 * record in the task's JVM), and task commit folds those into the task record. The work
 * directory has the shape of S3A's own magic committer's: S3A's in-memory tracker keys a
 * file's record by the fourth element below {@code __magic_job-…}, which must be the task
 * attempt ID.
 */
public final class FencedLayout {
  public static final String FENCED_PREFIX = "__fenced_job-";
  public static final String MAGIC_PREFIX = "__magic_job-";
  public static final String COMMIT_RECORD = "commit.json";
  public static final String MARKER = "_job.json";
  public static final String TASKS_DIR = "tasks";
  public static final String PENDINGSET = ".pendingset";
  public static final String MAGIC_PENDING = ".pending";
  public static final String BASE = "__base";
  public static final String SUCCESS = "_SUCCESS";
  public static final String PROBE_AREA = ".zerorename-probe/";

  private final StoreUrl dest;
  private final String jobId;
  private final int jobAttempt;

  public FencedLayout(StoreUrl dest, String jobId, int jobAttempt) {
    this.dest = dest;
    this.jobId = jobId;
    this.jobAttempt = jobAttempt;
  }

  public StoreUrl dest() {
    return dest;
  }

  /** The destination as a URL without a trailing slash. */
  public String destUrl() {
    String u = dest.toString();
    return u.endsWith("/") && !dest.dirPrefix().isEmpty() ? u.substring(0, u.length() - 1) : u;
  }

  public String url(String key) {
    return dest.withKey(key);
  }

  /** The key of a URL in this store. */
  public String key(String url) {
    return StoreUrl.parse(url).key();
  }

  public String destPrefix() {
    return dest.dirPrefix();
  }

  public String root() {
    return destPrefix() + FENCED_PREFIX + jobId;
  }

  public String rootPrefix() {
    return root() + "/";
  }

  private static String two(int attempt) {
    return String.format("%02d", attempt);
  }

  public String attemptDir() {
    return root() + "/" + two(jobAttempt);
  }

  public String marker() {
    return attemptDir() + "/" + MARKER;
  }

  public String tasksDir() {
    return attemptDir() + "/" + TASKS_DIR + "/";
  }

  public String taskRecord(String taskName) {
    return tasksDir() + taskName + PENDINGSET;
  }

  public String commitRecord() {
    return root() + "/" + COMMIT_RECORD;
  }

  public String success() {
    return destPrefix() + SUCCESS;
  }

  /** The work area of every task attempt of this job (deleted whole by job cleanup). */
  public String magicRoot() {
    return destPrefix() + MAGIC_PREFIX + jobId;
  }

  /** A task attempt's work directory: its files' final keys are the paths under it. The
   *  attempt ID is the fourth element below {@link #magicRoot()} (where S3A's in-memory magic
   *  tracker takes it from). */
  public String workDir(String attemptId) {
    return magicRoot() + "/job-" + jobId + "/" + two(jobAttempt) + "/" + TASKS_DIR + "/"
        + attemptId + "/" + BASE;
  }

  /**
   * The work path a committer of this job gives Hadoop and Spark
   * ({@code PathOutputCommitter#getWorkPath}), as a path under {@code outputPath}, the
   * destination as Hadoop names it: the task attempt's work directory ({@link #workDir}), or,
   * for a job's committer ({@code task} null or without an attempt), the job's work area
   * ({@link #magicRoot}).
   */
  public Path workPath(Path outputPath, TaskAttemptContext task) {
    String key = task != null && task.getTaskAttemptID() != null
        ? workDir(task.getTaskAttemptID().toString()) : magicRoot();
    return new Path(outputPath, key.substring(destPrefix().length()));
  }

  public String jobId() {
    return jobId;
  }

  public int jobAttempt() {
    return jobAttempt;
  }
}
