package io.zerorename.committer.stages;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

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
 * <p>The three reads this needs (every job root on the destination, the job's work area, the
 * uncompleted uploads under the destination) depend on none of each other, so they are sent
 * together on the stage's threads and the job commit waits one round trip, not three; what is
 * decided from them, and every request after them, is as when they were sent one by one. Their
 * order does not change what the clearer decides: an upload or {@code .pending} appearing
 * between two of the reads is the same race whichever read goes first.
 */
public final class CleanupJobStage extends AbstractStage<CommitRecord, Integer> {

  public CleanupJobStage(StageConfig config) {
    super(FencedStatistics.JOB_STAGE_CLEANUP, config);
  }

  /**
   * One LIST of every job root on the destination ({@code <dest>/__fenced_job-}) serves both
   * steps: this job's root is a part of it (the objects under {@link FencedLayout#rootPrefix}),
   * so the clearer gets those instead of listing them again. The expiry only deletes other
   * jobs' commit records older than the retention, which nothing here changes.
   */
  @Override
  protected Integer executeStage(CommitRecord record) throws IOException {
    StageConfig c = config();
    FencedLayout layout = c.layout();
    ExecutorService pool = Executors.newFixedThreadPool(Math.min(c.threads(), 3));
    List<ObjectEntry> roots;
    List<ObjectEntry> work;
    List<PendingUpload> uploads;
    try {
      Future<List<ObjectEntry>> rootsRead = pool.submit(
          () -> c.store().list(layout.destPrefix() + FencedLayout.FENCED_PREFIX));
      Future<List<ObjectEntry>> workRead = pool.submit(
          () -> c.store().list(layout.magicRoot() + "/"));
      Future<List<PendingUpload>> uploadsRead = pool.submit(
          () -> c.store().listUploads(layout.destPrefix()));
      // the first failure in the order they were sent one by one is the one reported
      roots = result(rootsRead);
      work = result(workRead);
      uploads = result(uploadsRead);
    } finally {
      pool.shutdownNow();
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

  /** The read's answer, or its failure as the read itself would have thrown it. */
  private <T> T result(Future<T> read) throws IOException {
    try {
      return read.get();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException) {
        throw (IOException) cause;
      }
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw new IOException(cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while listing job " + config().jobId()
          + "'s roots, work area and uploads for its cleanup");
    }
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
