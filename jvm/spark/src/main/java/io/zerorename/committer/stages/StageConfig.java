package io.zerorename.committer.stages;

import java.util.Objects;
import java.util.function.LongSupplier;

import io.zerorename.committer.FencedLayout;
import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.store.CommitStore;

/**
 * Everything a stage needs, read once and frozen: the store, the layout, the job (and task)
 * identity, the options that change behaviour, the statistics and the clock. Built with
 * {@link Builder}, which refuses every change after {@link Builder#build()}.
 */
public final class StageConfig {
  private final CommitStore store;
  private final FencedLayout layout;
  private final String jobIdSource;
  private final String taskName;
  private final String attemptId;
  private final int taskAttempt;
  private final FencedStatistics stats;
  private final LongSupplier clock;
  private final String hostname;
  private final String committerClass;
  private final int threads;
  private final long retentionMillis;
  private final boolean markSuccess;
  private final boolean conditionalEnabled;
  private final boolean warnOnRacyStore;
  private final String choice;
  private final boolean dynamicPartitionOverwrite;
  private final String stopAfter;
  private final TrackedUploads trackedUploads;
  private final boolean taskRecordsInMessages;
  private final boolean workAreaWritten;

  private StageConfig(Builder b) {
    this.store = Objects.requireNonNull(b.store, "store");
    this.layout = Objects.requireNonNull(b.layout, "layout (destination and job ID)");
    this.jobIdSource = b.jobIdSource;
    this.taskName = b.taskName;
    this.attemptId = b.attemptId;
    this.taskAttempt = b.taskAttempt;
    this.stats = Objects.requireNonNull(b.stats, "statistics");
    this.clock = Objects.requireNonNull(b.clock, "clock");
    this.hostname = b.hostname;
    this.committerClass = b.committerClass;
    this.threads = Math.max(1, b.threads);
    this.retentionMillis = b.retentionMillis;
    this.markSuccess = b.markSuccess;
    this.conditionalEnabled = b.conditionalEnabled;
    this.warnOnRacyStore = b.warnOnRacyStore;
    this.choice = b.choice;
    this.dynamicPartitionOverwrite = b.dynamicPartitionOverwrite;
    this.stopAfter = b.stopAfter;
    this.trackedUploads = b.trackedUploads;
    this.taskRecordsInMessages = b.taskRecordsInMessages;
    this.workAreaWritten = b.workAreaWritten;
  }

  /**
   * Whether the job's task attempts leave objects in its work area
   * ({@link io.zerorename.committer.FencedLayout#magicRoot}): a {@code .pending} record (and
   * S3A's marker) beside each file. False where the destination's S3A filesystem keeps magic
   * commits in memory ({@code fs.s3a.committer.magic.track.commits.in.memory.enabled}): its
   * output streams then write nothing there, so the job's cleanup does not list it. Setup
   * and abort list it whatever this says.
   */
  public boolean workAreaWritten() {
    return workAreaWritten;
  }

  /** {@code fs.zerorename.fenced.task-records=messages}: a task commit returns its record for
   *  Spark's commit message and stores nothing. */
  public boolean taskRecordsInMessages() {
    return taskRecordsInMessages;
  }

  /** Where this JVM keeps the task's uploads (S3A's in-memory magic tracker), or null: they
   *  are {@code .pending} objects in the work directory. */
  public TrackedUploads trackedUploads() {
    return trackedUploads;
  }

  /** For tests only: the stage after which the committer stops as if its process died. */
  public String stopAfter() {
    return stopAfter;
  }

  public CommitStore store() {
    return store;
  }

  public FencedLayout layout() {
    return layout;
  }

  public String jobId() {
    return layout.jobId();
  }

  public int jobAttempt() {
    return layout.jobAttempt();
  }

  public String jobIdSource() {
    return jobIdSource;
  }

  public boolean isTask() {
    return attemptId != null;
  }

  public String taskName() {
    return Objects.requireNonNull(taskName, "not a task attempt's configuration");
  }

  public String attemptId() {
    return Objects.requireNonNull(attemptId, "not a task attempt's configuration");
  }

  public int taskAttempt() {
    return taskAttempt;
  }

  public FencedStatistics stats() {
    return stats;
  }

  public long now() {
    return clock.getAsLong();
  }

  public String hostname() {
    return hostname;
  }

  public String committerClass() {
    return committerClass;
  }

  public int threads() {
    return threads;
  }

  public long retentionMillis() {
    return retentionMillis;
  }

  public boolean markSuccess() {
    return markSuccess;
  }

  public boolean conditionalEnabled() {
    return conditionalEnabled;
  }

  public boolean warnOnRacyStore() {
    return warnOnRacyStore;
  }

  public String choice() {
    return choice;
  }

  public boolean dynamicPartitionOverwrite() {
    return dynamicPartitionOverwrite;
  }

  /** Builds a {@link StageConfig}; every setter refuses once built. */
  public static final class Builder {
    private boolean frozen;
    private CommitStore store;
    private FencedLayout layout;
    private String jobIdSource = "";
    private String taskName;
    private String attemptId;
    private int taskAttempt;
    private FencedStatistics stats = new FencedStatistics();
    private LongSupplier clock = System::currentTimeMillis;
    private String hostname = "";
    private String committerClass = "";
    private int threads = 8;
    private long retentionMillis = 24L * 3600 * 1000;
    private boolean markSuccess = true;
    private boolean conditionalEnabled = true;
    private boolean warnOnRacyStore;
    private String choice = "";
    private boolean dynamicPartitionOverwrite;
    private String stopAfter = "";
    private TrackedUploads trackedUploads;
    private boolean taskRecordsInMessages;
    private boolean workAreaWritten = true;

    private Builder check() {
      if (frozen) {
        throw new IllegalStateException("the stage configuration is frozen once built");
      }
      return this;
    }

    public Builder store(CommitStore v) {
      check().store = v;
      return this;
    }

    public Builder layout(FencedLayout v) {
      check().layout = v;
      return this;
    }

    public Builder jobIdSource(String v) {
      check().jobIdSource = v;
      return this;
    }

    public Builder task(String name, String attempt, int number) {
      check().taskName = name;
      this.attemptId = attempt;
      this.taskAttempt = number;
      return this;
    }

    public Builder stats(FencedStatistics v) {
      check().stats = v;
      return this;
    }

    public Builder clock(LongSupplier v) {
      check().clock = v;
      return this;
    }

    public Builder hostname(String v) {
      check().hostname = v;
      return this;
    }

    public Builder committerClass(String v) {
      check().committerClass = v;
      return this;
    }

    public Builder threads(int v) {
      check().threads = v;
      return this;
    }

    public Builder retentionMillis(long v) {
      check().retentionMillis = v;
      return this;
    }

    public Builder markSuccess(boolean v) {
      check().markSuccess = v;
      return this;
    }

    public Builder conditionalEnabled(boolean v) {
      check().conditionalEnabled = v;
      return this;
    }

    public Builder warnOnRacyStore(boolean v) {
      check().warnOnRacyStore = v;
      return this;
    }

    public Builder choice(String v) {
      check().choice = v == null ? "" : v;
      return this;
    }

    public Builder dynamicPartitionOverwrite(boolean v) {
      check().dynamicPartitionOverwrite = v;
      return this;
    }

    public Builder stopAfter(String v) {
      check().stopAfter = v == null ? "" : v;
      return this;
    }

    public Builder trackedUploads(TrackedUploads v) {
      check().trackedUploads = v;
      return this;
    }

    public Builder taskRecordsInMessages(boolean v) {
      check().taskRecordsInMessages = v;
      return this;
    }

    public Builder workAreaWritten(boolean v) {
      check().workAreaWritten = v;
      return this;
    }

    public StageConfig build() {
      check();
      frozen = true;
      return new StageConfig(this);
    }
  }
}
