package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.records.CommittedFile;
import io.zerorename.committer.records.Destinations;
import io.zerorename.committer.store.ObjectEntry;

/**
 * Dynamic partition overwrite ({@code partitionOverwriteMode=dynamic}): after the uploads are
 * completed, delete what else each partition directory this job wrote holds — never a file
 * this job committed, never a committer's area (another job's records and work), never
 * anything outside those partitions. Returns how many objects it deleted.
 */
public final class ReplacePartitionsStage extends AbstractStage<List<CommittedFile>, Integer> {

  public ReplacePartitionsStage(StageConfig config) {
    super(FencedStatistics.JOB_STAGE_PREPARE_DESTINATION, config);
  }

  @Override
  protected Integer executeStage(List<CommittedFile> files) throws IOException {
    StageConfig c = config();
    String prefix = c.layout().destPrefix();
    Set<String> written = new HashSet<>();
    Set<String> partitions = new TreeSet<>();
    for (CommittedFile f : files) {
      String key = c.layout().key(f.url());
      written.add(key);
      String rel = key.substring(prefix.length());
      int slash = rel.lastIndexOf('/');
      if (slash > 0) {
        partitions.add(rel.substring(0, slash + 1));
      }
    }
    List<String> doomed = new ArrayList<>();
    for (String partition : partitions) {
      for (ObjectEntry o : c.store().list(prefix + partition)) {
        String rel = o.key().substring(prefix.length());
        if (!written.contains(o.key()) && !Destinations.inCommitterArea(rel)) {
          doomed.add(o.key());
        }
      }
    }
    if (!doomed.isEmpty()) {
      c.store().delete(doomed);
      c.stats().incr(FencedStatistics.COMMITTER_FILES_REPLACED, doomed.size());
    }
    LOG.info("job {}: dynamic partition overwrite of {} partition(s): {} earlier object(s) "
        + "deleted", c.jobId(), partitions.size(), doomed.size());
    return doomed.size();
  }
}
