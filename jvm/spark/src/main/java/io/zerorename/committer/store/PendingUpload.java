package io.zerorename.committer.store;

/** An uncompleted multipart upload: its key and upload ID. */
public final class PendingUpload {
  private final String key;
  private final String uploadId;

  public PendingUpload(String key, String uploadId) {
    this.key = key;
    this.uploadId = uploadId;
  }

  public String key() {
    return key;
  }

  public String uploadId() {
    return uploadId;
  }

  @Override
  public String toString() {
    return key + " (upload " + uploadId + ")";
  }
}
