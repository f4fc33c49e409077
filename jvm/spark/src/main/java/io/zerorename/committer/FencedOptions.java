package io.zerorename.committer;

/** The options the fenced committer reads (Hadoop configuration keys), and their defaults. */
public final class FencedOptions {
  /** The committer's name, as the Python reference names it in records and _SUCCESS. */
  public static final String NAME = "fenced";
  /** Which committer {@link FencedCommitterFactory} makes: {@code fenced} or {@code auto}. */
  public static final String COMMITTER = "fs.zerorename.committer";
  /** Hadoop S3A's switch for conditional creation (HADOOP-19256): false forbids fenced. */
  public static final String CONDITIONAL_ENABLED = "fs.s3a.create.conditional.enabled";
  /** {@code refuse} (default) or {@code warn}: fenced on a store whose racers both won. */
  public static final String STORE_CHECK = "fs.zerorename.fenced.store-check";
  /** Why this job writes with its committer (auto's reason), copied into _SUCCESS. */
  public static final String CHOICE = "fs.zerorename.committer.choice";
  /** How long finished jobs' commit records are kept (a duration: 24h). */
  public static final String RETENTION = "zerorename.fenced.record.retention";
  public static final long DEFAULT_RETENTION_SECONDS = 24 * 3600;
  /** Job ID sources, in Hadoop's order of preference. */
  public static final String S3A_UUID = "fs.s3a.committer.uuid";
  public static final String SPARK_UUID = "spark.sql.sources.writeJobUUID";
  /** Threads for completing and aborting uploads. */
  public static final String THREADS = "fs.s3a.committer.threads";
  public static final int DEFAULT_THREADS = 8;
  /** Hadoop's switch for writing _SUCCESS. */
  public static final String MARK_SUCCESS = "mapreduce.fileoutputcommitter.marksuccessfuljobs";
  /** The capability Spark's PathOutputCommitProtocol asks for dynamic partition overwrite. */
  public static final String CAPABILITY_DYNAMIC_PARTITIONING =
      "mapreduce.job.committer.dynamic.partitioning";

  /** What {@code auto} resolved to on the driver ({@code fenced} or {@code magic}), for the
   *  tasks: they follow the driver's choice rather than measure again. */
  public static final String RESOLVED = "fs.zerorename.committer.resolved";
  /** S3A's switch: a magic job commit aborts every pending upload under the destination. */
  public static final String S3A_ABORT_PENDING = "fs.s3a.committer.abort.pending.uploads";

  /** S3A's switch: magic files keep their upload in the writing JVM (no {@code .pending}
   *  object, no marker). The committer reads it from the destination filesystem's own
   *  configuration, as S3A does. */
  public static final String S3A_TRACK_IN_MEMORY =
      "fs.s3a.committer.magic.track.commits.in.memory.enabled";

  /**
   * Where a task commit puts the task's record: {@value #TASK_RECORDS_MESSAGES} (only in the
   * task's commit message, no request: the default under
   * {@code io.zerorename.spark.FencedCommitProtocol} with Spark's commit coordination on) or
   * {@value #TASK_RECORDS_STORE} (one conditional PUT of the record, then one GET of the
   * commit record: always under Hadoop's protocol, whose job commit lists the records). The
   * model's {@code zerorename.fenced.task-records} (issue 46), under the {@code fs.zerorename}
   * prefix of the committer's other Hadoop options.
   */
  public static final String TASK_RECORDS = "fs.zerorename.fenced.task-records";
  public static final String TASK_RECORDS_MESSAGES = "messages";
  public static final String TASK_RECORDS_STORE = "store";
  /** Spark's commit coordination ({@code OutputCommitCoordinator.canCommit} before each task
   *  commit), read from Spark's configuration as Spark reads it (default on): what lets only
   *  one attempt of a task commit when no record is stored. */
  public static final String SPARK_COMMIT_COORDINATION =
      "spark.hadoop.outputCommitCoordination.enabled";

  /** For tests only: stop after this stage (a statistic name) as if the process died. */
  public static final String TEST_STOP_AFTER = "fs.zerorename.fenced.test.stop-after";

  private FencedOptions() {
  }
}
