package io.zerorename.committer;

import java.io.IOException;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.zerorename.committer.records.StoreUrl;
import io.zerorename.committer.records.SuccessData;
import io.zerorename.committer.records.TaskRecord;
import io.zerorename.committer.stages.AbortJobStage;
import io.zerorename.committer.stages.AbortTaskStage;
import io.zerorename.committer.stages.CommitJobStage;
import io.zerorename.committer.stages.CommitTaskStage;
import io.zerorename.committer.stages.SetupJobStage;
import io.zerorename.committer.stages.SimulatedCrashException;
import io.zerorename.committer.stages.StageConfig;
import io.zerorename.committer.stages.TaskOutput;
import io.zerorename.committer.stages.TrackedUploads;
import io.zerorename.committer.store.CommitStore;
import io.zerorename.committer.store.LocalCommitStore;
import io.zerorename.committer.store.S3CommitStore;

/**
 * zerorename's {@code fenced} committer as a Hadoop {@link PathOutputCommitter}: the protocol
 * of the Python reference ({@code zerorename.committers.fenced}), with the same records,
 * layout and {@code _SUCCESS}, inside Spark's own writers.
 *
 * <ul>
 *   <li>Task output: files are created under the attempt's work directory, an S3A magic path
 *   ({@link FencedLayout#workDir}), so each becomes an uncompleted multipart upload of its final
 *   key; nothing is visible until job commit. With S3A's
 *   {@code fs.s3a.committer.magic.track.commits.in.memory.enabled} on the destination's
 *   filesystem, task commit takes the uploads from S3A's in-memory tracker (no request) and
 *   drops them from it at task commit and abort; else it reads S3A's {@code .pending}
 *   objects.</li>
 *   <li>Task commit under Spark's protocol ({@link #runUnderSparkProtocol}), by default: no
 *   request; the task's record is returned for its commit message only
 *   ({@value FencedOptions#TASK_RECORDS}{@code =messages}).</li>
 *   <li>Task commit otherwise ({@code store}): one PUT of the task's record with
 *   {@code If-None-Match: *} at a key named
 *   by the task — the first attempt to commit a task wins; a later one is refused, aborts its
 *   uploads and returns, the task being committed by the winner ({@link #taskCommittedBy});
 *   a task commit after the job's commit point is fenced out ({@link TaskFencedException}).</li>
 *   <li>Job commit: a check that no key the job completes holds another writer's object
 *   (refused before the commit point: {@link JobCommitRefusedException}, nothing committed),
 *   one PUT of the commit record with {@code If-None-Match: *} — the commit
 *   point — then the uploads are completed (each with {@code If-None-Match: *}),
 *   {@code _SUCCESS} written, the job's records cleaned. Whatever happens after the commit
 *   point, setting up the same job ID again finishes (rolls forward).</li>
 *   <li>Job setup refuses a store that cannot fence ({@link StoreFencing}).</li>
 * </ul>
 *
 * Each call builds a frozen {@link StageConfig} and runs one stage.
 */
public class FencedCommitter extends PathOutputCommitter implements StreamCapabilities {
  private static final Logger LOG = LoggerFactory.getLogger(FencedCommitter.class);
  private static final Map<String, CommitStore> STORES = new ConcurrentHashMap<>();

  private final Path outputPath;
  /** The task attempt this committer was made for (null: a job's committer). */
  private final TaskAttemptContext task;
  private final StoreUrl dest;
  private final FencedLayout layout;
  private final String jobIdSource;
  private final Configuration conf;
  private final FencedStatistics stats = new FencedStatistics();
  /** Replace the partitions written: Spark's protocol asked for the capability (it asks only
   *  for a dynamic partition overwrite), or the option said so. */
  private volatile boolean dynamicOverwrite;
  private CommitStore store;
  private boolean jobSetUp;
  private List<TaskOutput.File> scanned;
  /** S3A's in-memory magic tracker, when the destination's filesystem uses it. */
  private TrackedUploads tracked;
  private boolean trackedKnown;
  private SuccessData lastSuccess;
  private volatile String committedBy;
  /** The record that commits the task after this object's last task commit. */
  private volatile TaskRecord committedRecord;
  /** Spark's protocol: the task records its commit messages carried, for the next job commit. */
  private List<TaskRecord> carriedRecords;
  /** Spark's protocol: the records of the tasks the driver accepted, for the next abort. */
  private List<TaskRecord> acceptedRecords = List.of();
  /** Null: Hadoop's protocol. Else Spark's ({@link #runUnderSparkProtocol}), and whether its
   *  commit coordination is on. */
  private volatile Boolean sparkCoordination;

  public FencedCommitter(Path outputPath, TaskAttemptContext context) throws IOException {
    this(outputPath, (JobContext) context, context);
  }

  public FencedCommitter(Path outputPath, JobContext context) throws IOException {
    this(outputPath, context, null);
  }

  private FencedCommitter(Path outputPath, JobContext context, TaskAttemptContext task)
      throws IOException {
    super(outputPath, context);
    this.task = task;
    this.outputPath = outputPath;
    this.conf = context.getConfiguration();
    String url = outputPath.toUri().toString();
    this.dest = destOf(outputPath);
    String[] id = jobId(conf, context);
    this.jobIdSource = id[1];
    int attempt = conf.getInt("mapreduce.job.application.attempt.id", 0);
    this.layout = new FencedLayout(dest, id[0], attempt);
    this.dynamicOverwrite = conf.getBoolean(DYNAMIC_OVERWRITE, false);
    LOG.debug("fenced committer for {} (job {}, from {})", url, id[0], id[1]);
  }

  /** A job that replaces the partitions it writes, without Spark's protocol asking. */
  static final String DYNAMIC_OVERWRITE = "fs.zerorename.fenced.dynamic-partition-overwrite";

  /** The job ID and where it came from, in Hadoop's order of preference. */
  public static String[] jobId(Configuration conf, JobContext context) {
    for (String key : new String[] {FencedOptions.S3A_UUID, FencedOptions.SPARK_UUID}) {
      String v = conf.getTrimmed(key, "");
      if (!v.isEmpty()) {
        return new String[] {v, key};
      }
    }
    return new String[] {context.getJobID().toString(), "JobID"};
  }

  /** The store of the destination (one client per bucket and options, per JVM). */
  protected synchronized CommitStore store() {
    if (store == null) {
      store = storeFor(conf, dest);
    }
    return store;
  }

  /** The store of {@code dest}: one client per bucket, endpoint and key, per JVM. */
  public static CommitStore storeFor(Configuration conf, StoreUrl dest) {
    String key = dest.scheme() + "://" + dest.bucket() + "|"
        + conf.getTrimmed("fs.s3a.endpoint", "") + "|"
        + conf.getTrimmed("fs.s3a.bucket." + dest.bucket() + ".endpoint", "") + "|"
        + conf.getTrimmed("fs.s3a.access.key", "");
    if (dest.scheme().equals("file")) {
      return STORES.computeIfAbsent("file", k -> LocalCommitStore.create());
    }
    return STORES.computeIfAbsent(key, k -> S3CommitStore.create(conf, dest.scheme(),
        dest.bucket()));
  }

  /** The destination of {@code outputPath} as the records name it. */
  public static StoreUrl destOf(Path outputPath) {
    String url = outputPath.toUri().toString();
    return StoreUrl.parse(url.startsWith("file:/") && !url.startsWith("file:///")
        ? "file://" + url.substring("file:".length()) : url);
  }

  /** Use this store instead of the destination's (tests). */
  public synchronized FencedCommitter withStore(CommitStore s) {
    this.store = s;
    return this;
  }

  private StageConfig.Builder base() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "unknown";
    }
    return new StageConfig.Builder().store(store()).layout(layout).jobIdSource(jobIdSource)
        .stats(stats).hostname(host).committerClass(getClass().getName())
        .threads(conf.getInt(FencedOptions.THREADS, FencedOptions.DEFAULT_THREADS))
        .retentionMillis(conf.getTimeDuration(FencedOptions.RETENTION,
            FencedOptions.DEFAULT_RETENTION_SECONDS, TimeUnit.SECONDS, TimeUnit.MILLISECONDS))
        .markSuccess(conf.getBoolean(FencedOptions.MARK_SUCCESS, true))
        .conditionalEnabled(conf.getBoolean(FencedOptions.CONDITIONAL_ENABLED, true))
        .warnOnRacyStore("warn".equalsIgnoreCase(conf.getTrimmed(FencedOptions.STORE_CHECK,
            "refuse")))
        .choice(conf.getTrimmed(FencedOptions.CHOICE, ""))
        .dynamicPartitionOverwrite(dynamicOverwrite)
        .taskRecordsInMessages(FencedOptions.TASK_RECORDS_MESSAGES.equals(taskRecordsQuietly()))
        .stopAfter(conf.getTrimmed(FencedOptions.TEST_STOP_AFTER, ""));
  }

  private StageConfig jobConfig() {
    return base().workAreaWritten(trackedUploads() == null).build();
  }

  private StageConfig taskConfig(TaskAttemptContext context) {
    TaskAttemptID id = context.getTaskAttemptID();
    return base().task(id.getTaskID().toString(), id.toString(), id.getId())
        .trackedUploads(trackedUploads()).build();
  }

  /** S3A's in-memory magic tracker when the destination's filesystem is S3A and keeps magic
   *  commits in memory (its own configuration says so: that is what S3A reads), else null.
   *  Other filesystems never load S3A's classes. */
  synchronized TrackedUploads trackedUploads() {
    if (!trackedKnown) {
      tracked = null;
      if (!(store() instanceof LocalCommitStore) && !dest.scheme().equals("file")) {
        org.apache.hadoop.fs.FileSystem fs;
        try {
          fs = outputPath.getFileSystem(conf);
        } catch (IOException e) { // no filesystem for the scheme (a test's store): no tracker
          LOG.debug("{}: no filesystem for {}: {}", this, outputPath, e.toString());
          fs = null;
        }
        if (fs != null && isS3A(fs) && fs.getConf() != null
            && fs.getConf().getBoolean(FencedOptions.S3A_TRACK_IN_MEMORY, false)) {
          tracked = new io.zerorename.committer.s3a.S3AMemoryUploads();
        }
      }
      trackedKnown = true;
      LOG.debug("{}: task uploads {}", this, tracked == null
          ? "from .pending objects in the work directory" : "from S3A's in-memory tracker");
    }
    return tracked;
  }

  static final String S3A_FILESYSTEM = "org.apache.hadoop.fs.s3a.S3AFileSystem";

  private static boolean isS3A(org.apache.hadoop.fs.FileSystem fs) {
    for (Class<?> c = fs.getClass(); c != null; c = c.getSuperclass()) {
      if (c.getName().equals(S3A_FILESYSTEM)) {
        return true;
      }
    }
    return false;
  }

  /** Drop the attempt's entries from S3A's in-memory tracker (no leak across tasks). */
  private void forgetTracked(StageConfig c) {
    if (c.trackedUploads() != null) {
      int n = c.trackedUploads().forget(c.attemptId(), layout.dest().bucket(),
          layout.workDir(c.attemptId()));
      LOG.debug("task attempt {}: forgot {} in-memory upload(s)", c.attemptId(), n);
    }
  }

  public FencedLayout layout() {
    return layout;
  }

  public FencedStatistics statistics() {
    return stats;
  }

  /** The {@code _SUCCESS} data of this object's last job commit (null before). */
  public SuccessData lastSuccess() {
    return lastSuccess;
  }

  @Override
  public Path getOutputPath() {
    return outputPath;
  }

  @Override
  public Path getWorkPath() throws IOException {
    return layout.workPath(outputPath, task);
  }

  /** Where a task attempt's files go: its S3A magic directory. */
  public Path getTaskAttemptPath(TaskAttemptContext context) {
    return layout.workPath(outputPath, context);
  }

  /**
   * Spark's protocol ({@code io.zerorename.spark.FencedCommitProtocol}) made this committer:
   * each task's record reaches the driver in its commit message, and the driver accepts one
   * attempt per task, asking Spark's commit coordinator before each task commit
   * ({@code commitCoordination}: {@value FencedOptions#SPARK_COMMIT_COORDINATION}). Only then
   * may a task commit keep its record out of the store
   * ({@value FencedOptions#TASK_RECORDS}{@code =messages}, the default here). Without this
   * call (Hadoop's protocol, MapReduce, a committer driven directly) it is always
   * {@code store}.
   */
  public void runUnderSparkProtocol(boolean commitCoordination) {
    this.sparkCoordination = commitCoordination;
  }

  /** {@value FencedOptions#TASK_RECORDS} as this committer applies it: {@code messages} or
   *  {@code store}. Refuses a value it cannot run with ({@link TaskRecordsOptionException}). */
  public String taskRecords() throws TaskRecordsOptionException {
    String configured = conf.getTrimmed(FencedOptions.TASK_RECORDS, "");
    String mode = configured.toLowerCase(java.util.Locale.ROOT);
    if (!mode.isEmpty() && !mode.equals(FencedOptions.TASK_RECORDS_MESSAGES)
        && !mode.equals(FencedOptions.TASK_RECORDS_STORE)) {
      throw new TaskRecordsOptionException(layout.destUrl(), FencedOptions.TASK_RECORDS + "="
          + configured + ": use " + FencedOptions.TASK_RECORDS_MESSAGES + " or "
          + FencedOptions.TASK_RECORDS_STORE);
    }
    Boolean coordination = sparkCoordination;
    if (coordination == null) {
      if (mode.equals(FencedOptions.TASK_RECORDS_MESSAGES)) {
        throw new TaskRecordsOptionException(layout.destUrl(), FencedOptions.TASK_RECORDS
            + "=messages needs Spark's commit protocol, whose job commit receives the tasks' "
            + "commit messages; under Hadoop's protocol (here) the job commit finds the tasks "
            + "only by their stored records. Set " + FencedOptions.TASK_RECORDS + "=store, or "
            + "write through Spark with spark.sql.sources.commitProtocolClass="
            + "io.zerorename.spark.FencedCommitProtocol");
      }
      return FencedOptions.TASK_RECORDS_STORE;
    }
    if (!coordination) {
      return FencedOptions.TASK_RECORDS_STORE;
    }
    return mode.isEmpty() ? FencedOptions.TASK_RECORDS_MESSAGES : mode;
  }

  /** {@link #taskRecords()}, {@code store} where it refuses (a task under Hadoop's protocol,
   *  whose job setup refused already). */
  private String taskRecordsQuietly() {
    try {
      return taskRecords();
    } catch (TaskRecordsOptionException e) {
      return FencedOptions.TASK_RECORDS_STORE;
    }
  }

  @Override
  public void setupJob(JobContext context) throws IOException {
    String records = taskRecords();
    if (Boolean.FALSE.equals(sparkCoordination) && !conf.getTrimmed(FencedOptions.TASK_RECORDS,
        "").equalsIgnoreCase(FencedOptions.TASK_RECORDS_STORE)) {
      LOG.warn("zerorename fenced: job {}: {}=store, not messages: Spark's commit coordination "
          + "is off ({}=false), and without it two attempts of a task could both have their "
          + "commit messages accepted; each task commit stores its record and checks the "
          + "commit record", layout.jobId(), FencedOptions.TASK_RECORDS,
          FencedOptions.SPARK_COMMIT_COORDINATION);
    } else {
      LOG.debug("{}: task records: {}", this, records);
    }
    new SetupJobStage(jobConfig()).apply(null);
    jobSetUp = true;
  }

  /**
   * Spark's protocol ({@code io.zerorename.spark.FencedCommitProtocol}): the next
   * {@link #commitJob(JobContext)} takes the job's task records from these, the ones the
   * accepted tasks' commit messages carried, instead of listing and reading the store.
   */
  public synchronized void useTaskRecords(List<TaskRecord> records) {
    this.carriedRecords = List.copyOf(records);
  }

  /**
   * Spark's protocol: the records of the tasks the driver has accepted so far (their commit
   * messages, handed to {@code FileCommitProtocol.onTaskCommit} on the driver). A following
   * {@link #abortJob} aborts the uploads they name, even where it could not attribute an
   * upload otherwise (another job active under the destination, no record stored).
   */
  public synchronized void abortWithTaskRecords(List<TaskRecord> records) {
    this.acceptedRecords = List.copyOf(records);
  }

  private synchronized List<TaskRecord> accepted() {
    return acceptedRecords;
  }

  /** Hadoop's protocol: the task records are found in the store (unless Spark's protocol
   *  handed them over first: {@link #useTaskRecords}). */
  @Override
  public void commitJob(JobContext context) throws IOException {
    List<TaskRecord> carried;
    synchronized (this) {
      carried = carriedRecords;
      carriedRecords = null;
    }
    commitJob(context, carried);
  }

  /**
   * Commit the job from these task records (null: list and read them from the store, as
   * Hadoop's protocol must). Each record is validated as one read from the store is.
   */
  public void commitJob(JobContext context, List<TaskRecord> records) throws IOException {
    StageConfig c = jobConfig();
    if (!jobSetUp && c.store().head(layout.marker()) == null) {
      throw new org.apache.hadoop.fs.PathNotFoundException(layout.url(layout.marker()),
          "commitJob: job " + layout.jobId() + " attempt " + layout.jobAttempt() + " was never "
          + "set up, or was already committed or aborted");
    }
    try {
      lastSuccess = new CommitJobStage(c).apply(records);
    } catch (SimulatedCrashException crash) {
      throw crash;
    } catch (IOException | RuntimeException e) {
      stats.incr(FencedStatistics.COMMITTER_JOBS_FAILED);
      try {
        List<TaskRecord> known = new java.util.ArrayList<>(accepted());
        if (records != null) {
          known.addAll(records);
        }
        new AbortJobStage(jobConfig()).apply(known);
      } catch (IOException | RuntimeException secondary) {
        e.addSuppressed(secondary);
      }
      throw e;
    }
    LOG.info("zerorename fenced: job {} committed {} file(s) to {}{}", layout.jobId(),
        lastSuccess.files().size(), layout.destUrl(), records == null ? ""
        : " (task records from Spark's commit messages)");
  }

  @Override
  public void abortJob(JobContext context, JobStatus.State state) throws IOException {
    if (crashed(context)) {
      return;
    }
    new AbortJobStage(jobConfig()).apply(accepted());
  }

  /** After a test's simulated crash the process is "dead": it aborts nothing. */
  private boolean crashed(JobContext context) {
    return !conf.getTrimmed(FencedOptions.TEST_STOP_AFTER, "").isEmpty();
  }

  @Override
  @SuppressWarnings("deprecation")
  public void cleanupJob(JobContext context) throws IOException {
    if (crashed(context)) {
      return;
    }
    new AbortJobStage(jobConfig()).apply(null);
  }

  @Override
  public void setupTask(TaskAttemptContext context) throws IOException {
    scanned = null;
  }

  @Override
  public boolean needsTaskCommit(TaskAttemptContext context) throws IOException {
    StageConfig c = taskConfig(context);
    if (c.store() instanceof LocalCommitStore) {
      scanned = null; // the files become uploads at task commit only
      return TaskOutput.any(c, c.attemptId());
    }
    scanned = TaskOutput.scan(c, c.attemptId());
    return !scanned.isEmpty();
  }

  /**
   * Commit the task attempt: its files' uploads into one task record, stored
   * ({@code store}) or only returned for the commit message ({@code messages}).
   *
   * <p>Every upload of the attempt is sent before this call, so before Spark's protocol asks
   * the commit coordinator ({@code canCommit}, which Spark's {@code commitTask} asks before it
   * calls this): S3A's magic output stream uploads a file's last part at {@code close()},
   * completing nothing, and Spark's file writers close every file before their task commit.
   * So a lost attempt that the coordinator let commit cannot upload after another attempt
   * was let commit and the job's cleanup ran, and no upload can be left behind without the
   * fence check (the model's first leftover of {@code messages}, issue 46, needs uploads after
   * {@code canCommit}). The exception is {@code file://}, whose emulated uploads are made here:
   * there, under {@code messages}, the task commit still reads the commit record.
   */
  @Override
  public void commitTask(TaskAttemptContext context) throws IOException {
    StageConfig c = taskConfig(context);
    List<TaskOutput.File> files = scanned != null ? scanned : TaskOutput.scan(c, c.attemptId());
    scanned = null;
    committedRecord = null;
    try {
      committedRecord = new CommitTaskStage(c).apply(files);
      committedBy = c.attemptId();
    } catch (TaskCommittedByOtherAttemptException lost) {
      // the task is committed, by the attempt whose record won (one that died after its
      // record landed, or a partitioned one): the job commit publishes that record's files.
      // Failing here would fail every retry of the task the same way, and so the job.
      // The stage aborted this attempt's uploads.
      committedBy = lost.winner();
      committedRecord = lost.winnerRecord();
      LOG.warn("zerorename fenced: {}; the task counts as committed", lost.getMessage());
    } catch (TaskFencedException refused) {
      stats.incr(FencedStatistics.COMMITTER_TASKS_FAILED);
      forgetTracked(c); // the stage aborted the attempt's uploads
      throw refused;
    } catch (IOException | RuntimeException e) {
      // kept in memory for abortTask, which Spark calls next, to abort the uploads
      stats.incr(FencedStatistics.COMMITTER_TASKS_FAILED);
      throw e;
    }
    forgetTracked(c);
  }

  /** The attempt whose record commits the task after this object's last {@link #commitTask}:
   *  this one's, or the one whose record was there first (null before a task commit). */
  public String taskCommittedBy() {
    return committedBy;
  }

  /** The record that commits the task after this object's last {@link #commitTask}: the one
   *  this attempt saved, or the winner's (null before a task commit, or when it failed). */
  public TaskRecord taskRecord() {
    return committedRecord;
  }

  @Override
  public void abortTask(TaskAttemptContext context) throws IOException {
    scanned = null;
    committedRecord = null;
    StageConfig c = taskConfig(context);
    try {
      new AbortTaskStage(c).apply(null);
    } finally {
      forgetTracked(c);
    }
  }

  @Override
  @SuppressWarnings("deprecation")
  public boolean isRecoverySupported() {
    return false;
  }

  @Override
  public boolean isCommitJobRepeatable(JobContext context) {
    return false;
  }

  @Override
  public boolean hasCapability(String capability) {
    if (FencedOptions.CAPABILITY_DYNAMIC_PARTITIONING.equals(capability)) {
      // Spark's PathOutputCommitProtocol asks this only for a dynamic partition overwrite
      // (mode overwrite, partitionOverwriteMode=dynamic, partitions not all static): the job
      // commit then deletes the earlier files of the partitions it wrote, and nothing else
      dynamicOverwrite = true;
      return true;
    }
    return false;
  }

  @Override
  public String toString() {
    return "FencedCommitter{dest=" + layout.destUrl() + ", job=" + layout.jobId() + "/"
        + layout.jobAttempt() + "}";
  }
}
