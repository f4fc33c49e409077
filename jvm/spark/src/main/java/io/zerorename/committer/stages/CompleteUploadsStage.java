package io.zerorename.committer.stages;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.JobCommitIncompleteException;
import io.zerorename.committer.records.CommittedFile;
import io.zerorename.committer.records.RecordedUpload;
import io.zerorename.committer.store.MultipartEtag;
import io.zerorename.committer.store.ObjectEntry;
import io.zerorename.committer.store.PreconditionFailedException;

/**
 * After the commit point: complete every upload the commit record names, in parallel, each
 * with {@code If-None-Match: *} (a job commit never overwrites an object it did not write). An
 * upload already gone, or a key that already exists, is done when the object holds this
 * upload's data ({@link #holds}):
 * a retry or a roll-forward completes what is left and nothing twice. Any other failure is
 * {@link JobCommitIncompleteException}: nothing is reverted, a new attempt rolls forward.
 *
 * <p>On a store measured to ignore the condition on complete (Ceph RGW; {@link
 * io.zerorename.committer.store.CommitStore#completeIgnoresCondition}) the job's keys are
 * listed once ({@link ExistingKeys}: the job commit's check before the commit point, {@link
 * CheckKeysStage}, or on a roll-forward a listing here): a key listed as existing is judged as a refused
 * complete would be, from the listing's size and ETag, without a request; a key the listing
 * found absent is completed without the condition (no HEAD); a key it did not reach is
 * completed with it (the store's HEAD first).
 */
public final class CompleteUploadsStage
    extends AbstractStage<List<RecordedUpload>, List<CommittedFile>> {
  /** The job commit's check of its keys ({@link CheckKeysStage}), or null (a roll-forward). */
  private final ExistingKeys checked;

  public CompleteUploadsStage(StageConfig config) {
    this(config, null);
  }

  /** With the answer of the job commit's {@link CheckKeysStage} (null: none), which a store
   *  that ignores the condition on complete uses instead of listing the keys again. */
  CompleteUploadsStage(StageConfig config, ExistingKeys checked) {
    super(FencedStatistics.JOB_STAGE_COMPLETE_UPLOADS, config);
    this.checked = checked;
  }

  @Override
  protected List<CommittedFile> executeStage(List<RecordedUpload> uploads) throws IOException {
    StageConfig c = config();
    List<CommittedFile> files = new ArrayList<>();
    if (uploads.isEmpty()) {
      return files;
    }
    List<String> keys = new ArrayList<>();
    for (RecordedUpload u : uploads) {
      keys.add(c.layout().key(u.url()));
    }
    ExistingKeys listed = !c.store().completeIgnoresCondition() ? ExistingKeys.none()
        : checked != null ? checked : ExistingKeys.list(c, keys);
    ExecutorService pool = Executors.newFixedThreadPool(Math.min(c.threads(), uploads.size()));
    IOException first = null;
    String firstUrl = null;
    int failed = 0;
    try {
      List<Future<CommittedFile>> futures = new ArrayList<>();
      for (RecordedUpload u : uploads) {
        futures.add(pool.submit(() -> completeOne(u, listed)));
      }
      for (int i = 0; i < futures.size(); i++) {
        try {
          files.add(futures.get(i).get());
        } catch (ExecutionException e) {
          failed++;
          if (first == null) {
            first = e.getCause() instanceof IOException ? (IOException) e.getCause()
                : new IOException(e.getCause());
            firstUrl = uploads.get(i).url();
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new java.io.InterruptedIOException("interrupted while completing uploads");
        }
      }
    } finally {
      pool.shutdownNow();
    }
    if (first != null) {
      JobCommitIncompleteException e = new JobCommitIncompleteException(firstUrl, "job "
          + c.jobId() + " is committed (record " + url(c.layout().commitRecord()) + ") but "
          + failed + " of " + uploads.size() + " upload(s) could not be completed now ("
          + first + "); nothing was reverted: setting up job " + c.jobId()
          + " again completes them");
      e.initCause(first);
      throw e;
    }
    Collections.sort(files);
    return files;
  }

  private CommittedFile completeOne(RecordedUpload u, ExistingKeys listed) throws IOException {
    StageConfig c = config();
    String key = c.layout().key(u.url());
    String etag;
    ObjectEntry there = listed.existing(key);
    if (there != null) {
      if (!holds(there, u, c.store().multipartEtags())) {
        throw new PreconditionFailedException(u.url(), "the key exists (listed before "
            + "completing: " + there.size() + " bytes, ETag " + there.etag() + ") and holds "
            + "another object than upload " + u.uploadId() + " (" + u.size() + " bytes): "
            + "another writer's; not overwritten");
      }
      c.stats().incr(FencedStatistics.STORE_COMPLETE_RECOVERED);
      etag = there.etag();
    } else {
      try {
        etag = c.store().complete(key, u.uploadId(), u.etags(), !listed.covers(key));
      } catch (FileNotFoundException | PreconditionFailedException e) {
        ObjectEntry info = c.store().head(key);
        if (info == null || !holds(info, u, c.store().multipartEtags())) {
          throw e;
        }
        c.stats().incr(FencedStatistics.STORE_COMPLETE_RECOVERED);
        etag = info.etag();
      }
    }
    c.stats().incr(FencedStatistics.COMMITTER_COMMITS_COMPLETED);
    c.stats().incr(FencedStatistics.COMMITTER_FILES_COMMITTED);
    c.stats().incr(FencedStatistics.COMMITTER_BYTES_COMMITTED, u.size());
    return new CommittedFile(u.url(), u.size(), etag);
  }

  /**
   * Does {@code info} hold upload {@code u}'s data? Its size, and its ETag where that tells: an
   * ETag {@code …-N} (a completed upload's) must name the upload's part count, and be the ETag
   * its parts make when that is computable (not with SSE-KMS: part ETags are not MD5s); an
   * ETag without {@code -N} is another writer's single PUT where the store's completed uploads
   * always carry S3's multipart ETag ({@code multipartEtags}, {@link
   * io.zerorename.committer.store.CommitStore#multipartEtags}); elsewhere (a local file
   * system) the size decides. The Python reference's {@code existing_keys.holds}.
   */
  public static boolean holds(ObjectEntry info, RecordedUpload u, boolean multipartEtags) {
    if (info.size() != u.size()) {
      return false;
    }
    String etag = info.etag().replace("\"", "");
    int parts = partCount(etag);
    if (parts < 0) {
      return !multipartEtags;
    }
    if (parts != u.etags().size()) {
      return false;
    }
    String expected = expectedMultipartEtag(u.etags());
    return expected == null || etag.equals(expected);
  }

  /** The N of a multipart ETag {@code …-N}, or -1 when {@code etag} is not one. */
  static int partCount(String etag) {
    int dash = etag.lastIndexOf('-');
    String tail = etag.substring(dash + 1);
    if (dash <= 0 || tail.isEmpty()) {
      return -1;
    }
    for (int i = 0; i < tail.length(); i++) {
      if (tail.charAt(i) < '0' || tail.charAt(i) > '9') {
        return -1;
      }
    }
    return tail.length() > 9 ? Integer.MAX_VALUE : Integer.parseInt(tail);  // no upload's
  }

  /** {@code md5(concat(md5 of each part))-N}, or null when a part ETag is not an MD5. */
  static String expectedMultipartEtag(List<String> etags) {
    return MultipartEtag.of(etags);
  }
}
