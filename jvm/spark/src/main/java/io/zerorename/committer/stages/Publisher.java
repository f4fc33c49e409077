package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.zerorename.committer.FencedOptions;
import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.StoreFencing;
import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.records.CommittedFile;
import io.zerorename.committer.records.SuccessData;

/**
 * Everything after the commit point, for a job commit and for a roll-forward alike: complete
 * the uploads, replace the partitions written (dynamic partition overwrite), save
 * {@code _SUCCESS}, clean up (the clean-up's reads sent beside the {@code _SUCCESS} PUT).
 * Each step is idempotent, so a crash anywhere here is finished by the next attempt of the
 * job.
 */
public final class Publisher {
  private final StageConfig c;

  public Publisher(StageConfig config) {
    this.c = config;
  }

  /** Publish {@code record}; {@code taskStats} (may be null) go into {@code _SUCCESS}. */
  public SuccessData publish(CommitRecord record, FencedStatistics taskStats)
      throws IOException {
    return publish(record, taskStats, null);
  }

  /** Publish {@code record} after the job commit's check of its keys ({@code checked}; null on
   *  a roll-forward), which the completes reuse where the store ignores their condition. */
  SuccessData publish(CommitRecord record, FencedStatistics taskStats, ExistingKeys checked)
      throws IOException {
    List<CommittedFile> files = new CompleteUploadsStage(c, checked).apply(record.uploads());
    int replaced = 0;
    if (c.dynamicPartitionOverwrite()) {
      replaced = new ReplacePartitionsStage(c).apply(files);
    }
    c.stats().incr(FencedStatistics.COMMITTER_JOBS_COMPLETED);
    SuccessData success = successData(record, files, taskStats, replaced);
    // the cleanup's reads go out beside the _SUCCESS PUT (none of them reads it); nothing is
    // deleted or aborted before _SUCCESS is saved. With one thread every request goes in
    // turn: the cleanup then sends its reads after _SUCCESS
    CleanupJobStage.Reads reads = c.threads() > 1 ? CleanupJobStage.Reads.start(c) : null;
    try {
      new SaveSuccessStage(c).apply(success);
      try {
        new CleanupJobStage(c, reads).apply(record);
      } catch (SimulatedCrashException crash) {
        throw crash;
      } catch (IOException | RuntimeException e) {
        c.stats().incr(FencedStatistics.COMMITTER_CLEANUP_FAILURES);
        AbstractStage.LOG.warn("job {} is committed, but its cleanup failed (abort or the "
            + "next job's cleanup removes what it left): {}", c.jobId(), e.toString());
        success = success.withDiagnostic("cleanup.failure", e.toString());
      }
    } finally {
      if (reads != null) {
        reads.close();
      }
    }
    return success;
  }

  private SuccessData successData(CommitRecord record, List<CommittedFile> files,
      FencedStatistics taskStats, int replaced) {
    FencedStatistics all = new FencedStatistics();
    all.aggregate(c.stats().snapshot());
    if (taskStats != null) {
      all.aggregate(taskStats.snapshot());
    }
    long bytes = 0;
    List<String> names = new ArrayList<>();
    for (CommittedFile f : files) {
      bytes += f.size();
      names.add(f.url());
    }
    Map<String, Long> metrics = new TreeMap<>();
    metrics.put("files", (long) files.size());
    metrics.put("bytes", bytes);
    metrics.put("tasks", (long) record.tasks().size());
    Map<String, String> diagnostics = new TreeMap<>();
    diagnostics.put("committer.class", c.committerClass());
    diagnostics.put("hadoop.committer", c.committerClass());
    diagnostics.put("stage", FencedStatistics.COMMITTER_COMMIT_JOB);
    diagnostics.put("threads", Integer.toString(c.threads()));
    diagnostics.put("destination", c.layout().destUrl());
    diagnostics.put("fenced.commit.record", c.layout().url(c.layout().commitRecord()));
    diagnostics.put("fenced.job.attempt", Integer.toString(record.jobAttempt()));
    if (!c.choice().isEmpty()) {
      diagnostics.put("committer.choice", c.choice());
    }
    StoreFencing.Decision d = StoreFencing.cached(c.store());
    if (d != null) {
      diagnostics.put("store.fencing", d.describe());
    }
    if (c.dynamicPartitionOverwrite()) {
      diagnostics.put("partition.overwrite", "dynamic: " + replaced
          + " earlier file(s) of the written partitions deleted");
    }
    return new SuccessData(FencedOptions.NAME, c.jobId(), c.jobIdSource(), c.now(),
        c.hostname(), "zerorename " + FencedOptions.NAME + " committer, job attempt "
        + c.jobAttempt(), true, names, metrics, diagnostics, all.snapshot(),
        FencedStatistics.COMMITTER_COMMIT_JOB, files);
  }
}
