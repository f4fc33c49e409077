package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.zerorename.committer.FencedLayout;
import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.store.ObjectEntry;
import io.zerorename.committer.store.PendingUpload;

/**
 * After publication: abort what the job owns and did not commit, delete its records and work
 * area (never its commit record), and expire the commit records of earlier finished jobs on
 * the destination older than the retention. Returns how many records expired.
 *
 * <p>The reads this needs (every job root on the destination, the job's work area, the
 * uncompleted uploads under the destination) depend on none of each other, so they are sent
 * together on their own threads ({@link Reads}) and the job commit waits one round trip, not
 * three; what is decided from them, and every request after them, is as when they were sent
 * one by one. Their order does not change what the clearer decides: an upload or
 * {@code .pending} appearing between two of the reads is the same race whichever read goes
 * first. The {@link Publisher} starts them beside the {@code _SUCCESS} PUT, which none of them
 * reads; a stage given no reads starts its own. With one thread ({@link StageConfig#threads})
 * they go one after the other, after {@code _SUCCESS}.
 *
 * <p>The work area is not listed where the job's tasks write nothing there
 * ({@link StageConfig#workAreaWritten}: S3A keeps their magic commits in memory); setup and
 * abort still list it.
 */
public final class CleanupJobStage extends AbstractStage<CommitRecord, Integer> {
  private final Reads started;

  public CleanupJobStage(StageConfig config) {
    this(config, null);
  }

  /** A cleanup that uses {@code reads} (started by {@link Reads#start}) rather than its own. */
  public CleanupJobStage(StageConfig config, Reads reads) {
    super(FencedStatistics.JOB_STAGE_CLEANUP, config);
    this.started = reads;
  }

  /**
   * The cleanup's reads, in flight from {@link #start} until {@link #close}: one LIST of every
   * job root on the destination ({@code <dest>/__fenced_job-}), which also serves as the
   * listing of this job's root (the objects under {@link FencedLayout#rootPrefix}), the job's
   * work area (none where it is not written) and the uncompleted uploads under the
   * destination. A failure is reported by {@link CleanupJobStage} as the read threw it, the
   * first in the order the reads used to go one by one.
   */
  public static final class Reads implements AutoCloseable {
    static final long CLOSE_SECONDS = 30;
    private final StageConfig c;
    private final ExecutorService pool;
    private final Future<List<ObjectEntry>> roots;
    private final Future<List<ObjectEntry>> work;
    private final Future<List<PendingUpload>> uploads;

    private Reads(StageConfig c) {
      this.c = c;
      FencedLayout layout = c.layout();
      boolean listWork = c.workAreaWritten();
      this.pool = Executors.newFixedThreadPool(Math.min(c.threads(), listWork ? 3 : 2));
      this.roots = pool.submit(
          () -> c.store().list(layout.destPrefix() + FencedLayout.FENCED_PREFIX));
      this.work = listWork ? pool.submit(() -> c.store().list(layout.magicRoot() + "/"))
          : CompletableFuture.completedFuture(List.of());
      this.uploads = pool.submit(() -> c.store().listUploads(layout.destPrefix()));
    }

    /** Send the reads of {@code config}'s job. */
    public static Reads start(StageConfig config) {
      return new Reads(config);
    }

    /** Stop whatever is still running and wait (at most {@link #CLOSE_SECONDS}) until it has:
     *  a read the job commit no longer wants (its {@code _SUCCESS} failed) ends before the
     *  failure is reported. */
    @Override
    public void close() {
      pool.shutdownNow();
      try {
        if (!pool.awaitTermination(CLOSE_SECONDS, TimeUnit.SECONDS)) {
          LOG.warn("job {}: a read of its cleanup still runs after {} s; not waiting for it",
              c.jobId(), CLOSE_SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    /** The read's answer, or its failure as the read itself would have thrown it. */
    private <T> T result(Future<T> read) throws IOException {
      return Futures.result(read, () -> "listing job " + c.jobId()
          + "'s roots, work area and uploads for its cleanup");
    }
  }

  @Override
  protected Integer executeStage(CommitRecord record) throws IOException {
    StageConfig c = config();
    FencedLayout layout = c.layout();
    List<ObjectEntry> roots;
    List<ObjectEntry> work;
    List<PendingUpload> uploads;
    Reads reads = started != null ? started : Reads.start(c);
    try {
      // the first failure in the order they were sent one by one is the one reported
      roots = reads.result(reads.roots);
      work = reads.result(reads.work);
      uploads = reads.result(reads.uploads);
    } finally {
      reads.close();
    }
    if (!c.workAreaWritten()) {
      LOG.debug("job {}: the work area is not listed: S3A keeps the tasks' magic commits in "
          + "memory", c.jobId());
    }
    List<ObjectEntry> own = new ArrayList<>();
    for (ObjectEntry o : roots) {
      if (o.key().startsWith(layout.rootPrefix())) {
        own.add(o);
      }
    }
    new JobClearer(c).clear(record, false, own, work, uploads);
    return expire(roots);
  }

  private int expire(List<ObjectEntry> roots) throws IOException {
    StageConfig c = config();
    Map<String, List<ObjectEntry>> held = new TreeMap<>();
    for (ObjectEntry o : roots) {
      String rest = o.key().substring(c.layout().destPrefix().length());
      int slash = rest.indexOf('/');
      String root = slash < 0 ? rest : rest.substring(0, slash);
      held.computeIfAbsent(root, k -> new ArrayList<>()).add(o);
    }
    String own = FencedLayout.FENCED_PREFIX + c.jobId();
    long now = c.now();
    List<String> expired = new ArrayList<>();
    for (Map.Entry<String, List<ObjectEntry>> e : held.entrySet()) {
      List<ObjectEntry> entries = e.getValue();
      if (e.getKey().equals(own) || entries.size() != 1 || !entries.get(0).key().endsWith(
          "/" + e.getKey() + "/" + FencedLayout.COMMIT_RECORD)) {
        continue;
      }
      if (now - entries.get(0).modifiedMillis() >= c.retentionMillis()) {
        expired.add(entries.get(0).key());
      }
    }
    if (!expired.isEmpty()) {
      c.store().delete(expired);
      c.stats().incr(FencedStatistics.COMMITTER_RECORDS_EXPIRED, expired.size());
    }
    return expired.size();
  }
}
