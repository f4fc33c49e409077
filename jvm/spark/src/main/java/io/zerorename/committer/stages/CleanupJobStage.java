package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.zerorename.committer.FencedLayout;
import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.store.ObjectEntry;

/**
 * After publication: abort what the job owns and did not commit, delete its records and work
 * area (never its commit record), and expire the commit records of earlier finished jobs on
 * the destination older than the retention. Returns how many records expired.
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
    List<ObjectEntry> roots = c.store().list(c.layout().destPrefix()
        + FencedLayout.FENCED_PREFIX);
    List<ObjectEntry> own = new ArrayList<>();
    for (ObjectEntry o : roots) {
      if (o.key().startsWith(c.layout().rootPrefix())) {
        own.add(o);
      }
    }
    new JobClearer(c).clear(record, false, own);
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
