package zerorename.bench;

import java.io.Serializable;
import java.util.Arrays;
import java.util.List;

import io.zerorename.committer.stages.TrackedUploads;

/**
 * One file's uncompleted multipart upload as a task of the minimal committer hands it to the
 * driver in its commit message: the final key, the upload, its parts' ETags, the bytes.
 */
public final class MinimalUpload implements Serializable {
  private static final long serialVersionUID = 1L;
  private final String key;
  private final String uploadId;
  private final String[] etags;
  private final long length;

  public MinimalUpload(String key, String uploadId, List<String> etags, long length) {
    this.key = key;
    this.uploadId = uploadId;
    this.etags = etags.toArray(new String[0]);
    this.length = length;
  }

  /** The upload S3A's in-memory magic tracker holds for a file. */
  static MinimalUpload of(TrackedUploads.Upload u) {
    return new MinimalUpload(u.key(), u.uploadId(), u.etags(), u.length());
  }

  public String key() {
    return key;
  }

  public String uploadId() {
    return uploadId;
  }

  public List<String> etags() {
    return List.of(etags);
  }

  public long length() {
    return length;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof MinimalUpload)) {
      return false;
    }
    MinimalUpload u = (MinimalUpload) o;
    return key.equals(u.key) && uploadId.equals(u.uploadId) && Arrays.equals(etags, u.etags)
        && length == u.length;
  }

  @Override
  public int hashCode() {
    return key.hashCode() * 31 + uploadId.hashCode();
  }

  @Override
  public String toString() {
    return key + " (upload " + uploadId + ", " + etags.length + " part(s), " + length + " B)";
  }
}
