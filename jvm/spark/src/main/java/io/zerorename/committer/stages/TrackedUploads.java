package io.zerorename.committer.stages;

import java.util.Collections;
import java.util.List;

/**
 * The uploads of a task attempt's files as the process that wrote them keeps them (S3A's
 * in-memory magic tracker), so that task commit and abort need no request to find them.
 * Entries live in the task's JVM until {@link #forget} (task commit, task abort).
 */
public interface TrackedUploads {

  /** One file's upload: the final key, the upload, its parts' ETags, the bytes written. */
  final class Upload {
    private final String key;
    private final String uploadId;
    private final List<String> etags;
    private final long length;
    private final long createdMillis;

    public Upload(String key, String uploadId, List<String> etags, long length,
        long createdMillis) {
      this.key = key;
      this.uploadId = uploadId;
      this.etags = Collections.unmodifiableList(etags);
      this.length = length;
      this.createdMillis = createdMillis;
    }

    public String key() {
      return key;
    }

    public String uploadId() {
      return uploadId;
    }

    public List<String> etags() {
      return etags;
    }

    public long length() {
      return length;
    }

    public long createdMillis() {
      return createdMillis;
    }
  }

  /** The uploads of the files attempt {@code attemptId} closed in this JVM under the work
   *  directory {@code workDir} of bucket {@code bucket} (a copy; S3A keys its entries by the
   *  attempt ID alone, which another job in this JVM might share). */
  List<Upload> uploads(String attemptId, String bucket, String workDir);

  /** Drop the entries of attempt {@code attemptId} under {@code workDir} of {@code bucket};
   *  returns how many files they were. */
  int forget(String attemptId, String bucket, String workDir);
}
