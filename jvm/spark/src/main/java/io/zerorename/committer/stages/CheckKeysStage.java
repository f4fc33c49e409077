package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.JobCommitRefusedException;
import io.zerorename.committer.records.RecordedUpload;
import io.zerorename.committer.store.ObjectEntry;

/**
 * Before the commit point: does any key the job would complete hold an object this job did not
 * write? Its keys are listed once ({@link ExistingKeys}: one ListObjectsV2 under their longest
 * common prefix, within its page budget), on every store, and the keys the listing did not
 * reach are checked with a HEAD each, in parallel, so every key is answered. A key holding an
 * object that is not this upload's data ({@link CompleteUploadsStage#holds}: another size,
 * part count or multipart ETag, or a single PUT's ETag where the store's completed uploads
 * always carry a multipart one) refuses the job commit with {@link
 * JobCommitRefusedException}: no commit record is saved, nothing is published, and the job's
 * abort aborts every upload. A key already holding this upload's data passes (the complete
 * recognises it).
 *
 * <p>The check is a look before the commit point, not a condition of the completes: those keep
 * {@code If-None-Match: *}, and an object another writer creates between the check and the
 * complete still fails the job committed-but-incomplete ({@link CompleteUploadsStage}). A
 * roll-forward (the commit record found at setup) does not run this stage: its keys may hold
 * the job's own objects, which the complete recognises.
 *
 * <p>The answer is the listing with the HEADs' answers added: on a store whose complete ignores
 * the condition (Ceph RGW) the completes use it instead of listing again.
 */
public final class CheckKeysStage extends AbstractStage<List<RecordedUpload>, ExistingKeys> {

  public CheckKeysStage(StageConfig config) {
    super(FencedStatistics.JOB_STAGE_CHECK_KEYS, config);
  }

  @Override
  protected ExistingKeys executeStage(List<RecordedUpload> uploads) throws IOException {
    StageConfig c = config();
    if (uploads.isEmpty()) {
      return ExistingKeys.none();
    }
    List<String> keys = new ArrayList<>();
    for (RecordedUpload u : uploads) {
      keys.add(c.layout().key(u.url()));
    }
    ExistingKeys listed = ExistingKeys.list(c, keys);
    List<String> unreached = new ArrayList<>();
    for (String key : keys) {
      if (!listed.covers(key)) {
        unreached.add(key);
      }
    }
    ExistingKeys answered = listed.withHeads(unreached, head(unreached));
    List<RecordedUpload> foreign = new ArrayList<>();
    for (RecordedUpload u : uploads) {
      ObjectEntry there = answered.existing(c.layout().key(u.url()));
      if (there != null && !CompleteUploadsStage.holds(there, u, c.store().multipartEtags())) {
        foreign.add(u);
      }
    }
    if (!foreign.isEmpty()) {
      RecordedUpload first = foreign.get(0);
      ObjectEntry there = answered.existing(c.layout().key(first.url()));
      throw new JobCommitRefusedException(first.url(), foreign.size() + " key(s) job "
          + c.jobId() + " would complete hold an object it did not write (this one: "
          + there.size() + " bytes, ETag " + there.etag() + "; upload " + first.uploadId()
          + " has " + first.size() + " bytes): nothing is committed (the check precedes the "
          + "commit point; no commit record was saved, nothing was published, aborting the "
          + "job aborts its uploads and leaves those objects as they are); move the object "
          + "away, or write elsewhere, and rerun the job");
    }
    return answered;
  }

  /** HEAD each of {@code keys} in parallel (the stage's threads); null where absent. */
  private List<ObjectEntry> head(List<String> keys) throws IOException {
    List<ObjectEntry> out = new ArrayList<>();
    if (keys.isEmpty()) {
      return out;
    }
    StageConfig c = config();
    ExecutorService pool = Executors.newFixedThreadPool(Math.min(c.threads(), keys.size()));
    try {
      List<Future<ObjectEntry>> futures = new ArrayList<>();
      for (String key : keys) {
        futures.add(pool.submit(() -> c.store().head(key)));
      }
      for (Future<ObjectEntry> f : futures) {
        try {
          out.add(f.get());
        } catch (ExecutionException e) {
          throw e.getCause() instanceof IOException ? (IOException) e.getCause()
              : new IOException(e.getCause());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new java.io.InterruptedIOException("interrupted while checking the job's keys");
        }
      }
    } finally {
      pool.shutdownNow();
    }
    return out;
  }
}
